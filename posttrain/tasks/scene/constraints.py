"""The stated constraints of a scene task, each checked geometrically on a valid answer.

    placed(X)       X is present with the asked shape, size (within SIZE_TOLERANCE) and colour,
                    lies inside the room, stands on the floor or on top of another object, and
                    overlaps no other object (touching is fine). One per task object.
    on_top_of(A,B)  A's base is at B's top (within CONTACT_TOLERANCE) and A's centre is over B.
    beside(A,B)     the floor plans of A and B are at most BESIDE_MAX_GAP apart.
    left_of(A,B)    A's centre is at smaller x than B's, by more than ALIGN_TOLERANCE.
    aligned(A,B,x)  A and B stand on a line parallel to x: their centres' z agree within
                    ALIGN_TOLERANCE (axis z: their x agree).
    facing(A,B)     A's front (its own +z) points at B's centre within FACING_MAX_DEGREES.
    clear_path      every object is placed and none reaches into the walkway band.

A relation holds only when both its objects are placed: a relation between objects that are
missing, misshapen or piled into each other earns nothing, so stacking duplicates in one spot
or wrapping everything in one huge box scores no relation at all."""

from __future__ import annotations

from dataclasses import dataclass

from posttrain.tasks.scene.geometry import angle_between, footprint, front, overlaps, plan_gap
from posttrain.tasks.scene.schema import ObjectSpec, Relation, SceneAnswer, SceneObject, SceneTask

SIZE_TOLERANCE = 0.05  # relative, per side
CONTACT_TOLERANCE = 0.02  # metres: a base this close to a surface rests on it
OVERLAP_TOLERANCE = 0.01  # metres: shallower interpenetration counts as touching
BESIDE_MAX_GAP = 0.5
ALIGN_TOLERANCE = 0.05
FACING_MAX_DEGREES = 30.0


@dataclass(frozen=True)
class ConstraintResult:
    name: str
    held: bool
    why: str = ""  # what failed, when it did

    def to_json(self) -> dict:
        return {"name": self.name, "held": self.held, **({"why": self.why} if self.why else {})}


def check_constraints(task: SceneTask, answer: SceneAnswer) -> list[ConstraintResult]:
    by_id = {o.id: o for o in answer.objects}
    results = [_placed(spec, by_id, task) for spec in task.objects]
    placed = {placed_id(r.name) for r in results if r.held}
    results += [_relation(rel, by_id, placed) for rel in task.relations]
    if task.clear_path is not None:
        results.append(_clear_path(task, answer, placed))
    return results


def constraint_names(task: SceneTask) -> list[str]:
    """Every constraint of the task, in the order check_constraints reports them."""
    names = [f"placed({o.id})" for o in task.objects] + [relation_name(r) for r in task.relations]
    return names + (["clear_path"] if task.clear_path is not None else [])


def placed_id(name: str) -> str | None:
    """The object a `placed(X)` constraint is about; None for the other constraints."""
    return name[len("placed(") : -1] if name.startswith("placed(") else None


def relation_name(rel: Relation) -> str:
    return f"{rel.type}({rel.a}, {rel.b}{', ' + rel.axis if rel.axis else ''})"


def _placed(spec: ObjectSpec, by_id: dict[str, SceneObject], task: SceneTask) -> ConstraintResult:
    name = f"placed({spec.id})"
    obj = by_id.get(spec.id)
    if obj is None:
        return ConstraintResult(name, False, "missing")
    why = _mismatch(spec, obj) or _outside(obj, task) or _unsupported(obj, by_id) or _overlapping(obj, by_id)
    return ConstraintResult(name, not why, why)


def _mismatch(spec: ObjectSpec, obj: SceneObject) -> str:
    if obj.shape != spec.shape:
        return f"shape {obj.shape}, asked {spec.shape}"
    if obj.color.strip().lower() != spec.color.lower():
        return f"colour {obj.color}, asked {spec.color}"
    for got, want, side in zip(obj.size, spec.size, ("width", "height", "depth")):
        if abs(got - want) > SIZE_TOLERANCE * want:
            return f"{side} {got:g}, asked {want:g}"
    return ""


def _outside(obj: SceneObject, task: SceneTask) -> str:
    room, tol = task.room, CONTACT_TOLERANCE
    for x, z in footprint(obj).corners():
        if abs(x) > room.width / 2 + tol or abs(z) > room.depth / 2 + tol:
            return "outside the room"
    if obj.base < -tol or obj.top > room.height + tol:
        return "below the floor or through the ceiling"
    return ""


def _unsupported(obj: SceneObject, by_id: dict[str, SceneObject]) -> str:
    if abs(obj.base) <= CONTACT_TOLERANCE:
        return ""
    centre = (obj.position[0], obj.position[2])
    for other in by_id.values():
        if other is not obj and _rests_on(obj, other, centre):
            return ""
    return "floats: neither on the floor nor on another object"


def _rests_on(obj: SceneObject, other: SceneObject, centre: tuple[float, float]) -> bool:
    return abs(obj.base - other.top) <= CONTACT_TOLERANCE and footprint(other).contains(centre)


def _overlapping(obj: SceneObject, by_id: dict[str, SceneObject]) -> str:
    for other in by_id.values():
        if other is not obj and overlaps(obj, other, OVERLAP_TOLERANCE):
            return f"overlaps {other.id}"
    return ""


def _relation(rel: Relation, by_id: dict[str, SceneObject], placed: set[str]) -> ConstraintResult:
    name = relation_name(rel)
    unplaced = [i for i in (rel.a, rel.b) if i not in placed]
    if unplaced:
        return ConstraintResult(name, False, f"{unplaced[0]} is not placed")
    a, b = by_id[rel.a], by_id[rel.b]
    held = RELATION_TESTS[rel.type](a, b, rel)
    return ConstraintResult(name, held, "" if held else "does not hold")


def _on_top_of(a: SceneObject, b: SceneObject, rel: Relation) -> bool:
    return _rests_on(a, b, (a.position[0], a.position[2]))


def _beside(a: SceneObject, b: SceneObject, rel: Relation) -> bool:
    return plan_gap(footprint(a), footprint(b)) <= BESIDE_MAX_GAP


def _left_of(a: SceneObject, b: SceneObject, rel: Relation) -> bool:
    return a.position[0] < b.position[0] - ALIGN_TOLERANCE


def _aligned(a: SceneObject, b: SceneObject, rel: Relation) -> bool:
    coordinate = 0 if rel.axis == "z" else 2
    return abs(a.position[coordinate] - b.position[coordinate]) <= ALIGN_TOLERANCE


def _facing(a: SceneObject, b: SceneObject, rel: Relation) -> bool:
    towards = (b.position[0] - a.position[0], b.position[2] - a.position[2])
    return angle_between(front(a), towards) <= FACING_MAX_DEGREES


RELATION_TESTS = {
    "on_top_of": _on_top_of,
    "beside": _beside,
    "left_of": _left_of,
    "aligned": _aligned,
    "facing": _facing,
}


def _clear_path(task: SceneTask, answer: SceneAnswer, placed: set[str]) -> ConstraintResult:
    band = task.clear_path
    if len(placed) < len(task.objects):
        return ConstraintResult("clear_path", False, "not every object is placed")
    for obj in answer.objects:
        zs = [z for _, z in footprint(obj).corners()]
        if max(zs) > band.z_min + CONTACT_TOLERANCE and min(zs) < band.z_max - CONTACT_TOLERANCE:
            return ConstraintResult("clear_path", False, f"{obj.id} stands in the walkway")
    return ConstraintResult("clear_path", True)
