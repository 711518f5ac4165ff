"""The reference solver (the oracle): a valid, fully satisfying layout for every generated task.

It reads the layout's structure from the task's relations, as the generator states them:
    back row    the floor objects (neither on top of anything nor facing anything), left to right
                in the order the task lists them, centred on one line at WALL_MARGIN from the back
                wall, ROW_GAP apart: so they are beside, left of and aligned with each other
    front row   the objects that face something, in front of the back row (past the walkway when
                there is one), spaced by their turning circles so any yaw keeps them apart, each
                turned to look at its target
    on top      each on_top_of object centred on its support's top
"""

from __future__ import annotations

import math

from posttrain.tasks.scene.schema import ObjectSpec, SceneAnswer, SceneObject, SceneTask

WALL_MARGIN = 0.25
ROW_GAP = 0.2
ROW_SPACING = 0.6  # between the back and front rows when no walkway separates them
PATH_MARGIN = 0.05


def turning_radius(spec: ObjectSpec) -> float:
    return math.hypot(spec.size[0], spec.size[2]) / 2


def row_centres(widths: list[float], gap: float = ROW_GAP) -> list[float]:
    """x of each object in a row of these widths, `gap` apart, the row centred on x = 0."""
    total = sum(widths) + gap * (len(widths) - 1)
    centres, left = [], -total / 2
    for width in widths:
        centres.append(left + width / 2)
        left += width + gap
    return centres


def solve(task: SceneTask) -> SceneAnswer:
    supports = {r.a: r.b for r in task.relations if r.type == "on_top_of"}
    targets = {r.a: r.b for r in task.relations if r.type == "facing" and r.a not in supports}
    back = [o for o in task.objects if o.id not in supports and o.id not in targets]
    front = [o for o in task.objects if o.id in targets]
    placed: dict[str, SceneObject] = {}
    back_wall = -task.room.depth / 2
    back_depth = max((o.size[2] for o in back), default=0.0)
    z_back = back_wall + WALL_MARGIN + back_depth / 2
    for spec, x in zip(back, row_centres([o.size[0] for o in back])):
        placed[spec.id] = _object(spec, (x, 0.0, z_back), 0.0)
    if front:
        radii = [turning_radius(o) for o in front]
        start = task.clear_path.z_max + PATH_MARGIN if task.clear_path else z_back + back_depth / 2 + ROW_SPACING
        z_front = start + max(radii)
        for spec, x in zip(front, row_centres([2 * r for r in radii])):
            placed[spec.id] = _object(spec, (x, 0.0, z_front), 0.0)
    _stack(task, supports, placed)
    for spec in front:  # turn to the target once every object, stacked ones included, stands
        target = placed.get(targets[spec.id])
        if target is not None:
            me = placed[spec.id]
            yaw = math.degrees(math.atan2(target.position[0] - me.position[0], target.position[2] - me.position[2]))
            placed[spec.id] = me.model_copy(update={"rotation": round(yaw, 2)})
    return SceneAnswer(objects=[placed[o.id] for o in task.objects if o.id in placed])


def _stack(task: SceneTask, supports: dict[str, str], placed: dict[str, SceneObject]) -> None:
    """Put each on_top_of object on its support, supports first (a chain stacks bottom up)."""
    pending = [o for o in task.objects if o.id in supports]
    while pending:
        ready = [o for o in pending if supports[o.id] in placed]
        if not ready:
            return  # a cycle or a missing support: those stay unplaced and score as missing
        for spec in ready:
            below = placed[supports[spec.id]]
            placed[spec.id] = _object(spec, (below.position[0], below.top, below.position[2]), 0.0)
            pending.remove(spec)


def _object(spec: ObjectSpec, position: tuple[float, float, float], yaw: float) -> SceneObject:
    return SceneObject(
        id=spec.id,
        shape=spec.shape,
        size=spec.size,
        position=tuple(round(v, 3) for v in position),
        rotation=yaw,
        color=spec.color,
    )
