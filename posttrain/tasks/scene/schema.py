"""The two records of the scene domain, as pydantic models: the task (a room, the objects to
place with their sizes and colours, the relations between them) and the answer (every object
with a shape, a size, a position, a rotation and a colour).

Conventions: metres; y is up and the floor is y = 0; the room spans x in [-width/2, width/2]
and z in [-depth/2, depth/2]. An object's `position` is the centre of its base (where it
stands), its `size` is [width, height, depth] along its own x, y and z, and its `rotation` is
a yaw in degrees about the vertical axis (Three.js's rotation.y; yaw 0 faces +z). Every shape
is checked as its bounding box.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

SHAPES = ("box", "cylinder", "sphere")
RELATIONS = ("on_top_of", "beside", "left_of", "aligned", "facing")

# Sane bounds of the validity gate: anything outside is an invalid answer, not a big scene.
MAX_OBJECTS = 32
MAX_COORDINATE = 100.0
MAX_SIZE = 50.0
MIN_SIZE = 0.01  # a side shorter than a centimetre is a degenerate object
MAX_ROTATION = 3600.0

Coordinate = Annotated[float, Field(ge=-MAX_COORDINATE, le=MAX_COORDINATE, allow_inf_nan=False)]
Side = Annotated[float, Field(ge=MIN_SIZE, le=MAX_SIZE, allow_inf_nan=False)]
Name = Annotated[str, Field(min_length=1, max_length=64)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class SceneObject(_Record):
    """One object of an answer."""

    id: Name
    shape: Literal["box", "cylinder", "sphere"]
    size: tuple[Side, Side, Side]
    position: tuple[Coordinate, Coordinate, Coordinate]
    rotation: Annotated[float, Field(ge=-MAX_ROTATION, le=MAX_ROTATION, allow_inf_nan=False)] = 0.0
    color: Annotated[str, Field(min_length=1, max_length=32)]

    @property
    def width(self) -> float:
        return self.size[0]

    @property
    def height(self) -> float:
        return self.size[1]

    @property
    def depth(self) -> float:
        return self.size[2]

    @property
    def base(self) -> float:
        return self.position[1]

    @property
    def top(self) -> float:
        return self.position[1] + self.size[1]


class SceneAnswer(_Record):
    """A model's answer: the placed objects."""

    objects: list[SceneObject] = Field(max_length=MAX_OBJECTS)


class ObjectSpec(_Record):
    """An object the task asks for."""

    id: Name
    kind: Name
    shape: Literal["box", "cylinder", "sphere"]
    size: tuple[Side, Side, Side]
    color: Name


class Relation(_Record):
    """A stated relation between two objects `a` and `b` (see constraints.py for each one's test).
    `aligned` takes an axis: "x" (a line parallel to x: equal z) or "z" (equal x)."""

    type: Literal["on_top_of", "beside", "left_of", "aligned", "facing"]
    a: Name
    b: Name
    axis: Literal["x", "z"] | None = None


class Room(_Record):
    width: Annotated[float, Field(gt=0, le=MAX_COORDINATE)]
    depth: Annotated[float, Field(gt=0, le=MAX_COORDINATE)]
    height: Annotated[float, Field(gt=0, le=MAX_SIZE)]


class ClearPath(_Record):
    """A walkway across the room from the left wall to the right one: the band z_min <= z <= z_max
    holds no object."""

    z_min: float
    z_max: float


class SceneTask(_Record):
    """A scene task: what `posttrain scene generate` writes and the verifier reads."""

    difficulty: int = Field(ge=1)
    seed: int
    room: Room
    objects: list[ObjectSpec] = Field(min_length=1, max_length=MAX_OBJECTS)
    relations: list[Relation] = Field(default_factory=list)
    clear_path: ClearPath | None = None

    def spec(self, object_id: str) -> ObjectSpec:
        return next(o for o in self.objects if o.id == object_id)


def compact_json(answer: SceneAnswer) -> str:
    """The answer as short JSON (what the oracle replies and a warm start trains on): no spaces,
    whole numbers without a decimal point, a zero rotation left out."""

    def number(value: float) -> float | int:
        return int(value) if float(value).is_integer() else value

    objects = []
    for obj in answer.objects:
        item = {"id": obj.id, "shape": obj.shape, "size": [number(v) for v in obj.size]}
        item["position"] = [number(v) for v in obj.position]
        if obj.rotation:
            item["rotation"] = number(obj.rotation)
        item["color"] = obj.color
        objects.append(item)
    return json.dumps({"objects": objects}, separators=(",", ":"))
