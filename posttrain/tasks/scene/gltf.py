"""A scene answer as binary glTF (.glb), built with trimesh: one named, coloured mesh per object
(y up, as glTF wants), and the floor of the room when a task gives one."""

from __future__ import annotations

import math

from posttrain.tasks.scene.catalogue import COLORS
from posttrain.tasks.scene.schema import Room, SceneAnswer, SceneObject

_GREY = "#95a5a6"


def export_glb(answer: SceneAnswer, room: Room | None = None) -> bytes:
    import trimesh

    scene = trimesh.Scene()
    for obj in answer.objects:
        scene.add_geometry(object_mesh(obj), node_name=obj.id, geom_name=obj.id)
    if room is not None:
        floor = trimesh.creation.box(extents=(room.width, 0.02, room.depth))
        floor.apply_translation((0, -0.01, 0))
        floor.visual.vertex_colors = (216, 210, 196, 255)
        scene.add_geometry(floor, node_name="floor", geom_name="floor")
    return scene.export(file_type="glb")


def object_mesh(obj: SceneObject):
    import numpy as np
    import trimesh

    w, h, d = obj.size
    if obj.shape == "box":
        mesh = trimesh.creation.box(extents=(w, h, d))
    elif obj.shape == "cylinder":
        mesh = trimesh.creation.cylinder(radius=0.5, height=1.0, sections=32)
        mesh.apply_transform(trimesh.transformations.rotation_matrix(-math.pi / 2, (1, 0, 0)))  # its axis to y
        mesh.apply_scale((w, h, d))
    else:
        mesh = trimesh.creation.icosphere(subdivisions=3, radius=0.5)
        mesh.apply_scale((w, h, d))
    mesh.apply_transform(trimesh.transformations.rotation_matrix(math.radians(obj.rotation), (0, 1, 0)))
    mesh.apply_translation((obj.position[0], obj.position[1] + h / 2, obj.position[2]))
    mesh.visual.vertex_colors = np.array([*_rgb(obj.color), 255], dtype=np.uint8)
    return mesh


def _rgb(color: str) -> tuple[int, int, int]:
    hex_value = COLORS.get(color.lower(), color if color.startswith("#") and len(color) == 7 else _GREY)
    try:
        return tuple(int(hex_value[i : i + 2], 16) for i in (1, 3, 5))
    except ValueError:
        return tuple(int(_GREY[i : i + 2], 16) for i in (1, 3, 5))
