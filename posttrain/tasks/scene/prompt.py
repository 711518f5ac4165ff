"""A scene task in words: the instruction a model reads."""

from __future__ import annotations

from posttrain.tasks.scene.schema import ObjectSpec, Relation, SceneTask

_RELATION_WORDS = {
    "on_top_of": "{a} stands on top of {b}",
    "beside": "{a} is beside {b} (at most 0.5 m apart)",
    "left_of": "{a} is left of {b} (smaller x)",
    "aligned": "{a} and {b} are aligned (same {other})",
    "facing": "{a} faces {b}",
}
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}

ANSWER_FORMAT = (
    'Answer with JSON only: {"objects": [{"id": "...", "shape": "box|cylinder|sphere", '
    '"size": [w, h, d], "position": [x, y, z], "rotation": yaw_degrees, "color": "..."}]}. '
    "position is the centre of the object's base; y is up; yaw 0 faces +z."
)


def describe(task: SceneTask) -> str:
    room = task.room
    lines = [
        f"Lay out a 3D scene in a room {_n(room.width)} m wide (x from {_n(-room.width / 2)} to {_n(room.width / 2)}), "
        f"{_n(room.depth)} m deep (z from {_n(-room.depth / 2)} to {_n(room.depth / 2)}) and {_n(room.height)} m high; "
        "the floor is y = 0.",
        "Objects (size: width x height x depth in m):",
    ]
    lines += [f"- {line}" for line in _object_lines(task.objects)]
    lines.append("Constraints:")
    lines += [f"- {relation_words(r)}" for r in task.relations]
    if task.clear_path is not None:
        path = task.clear_path
        lines.append(
            f"- keep a walkway clear from wall to wall where z is between {_n(path.z_min)} and {_n(path.z_max)}"
        )
    lines.append("- every object stands on the floor or on another object, inside the room, overlapping nothing")
    lines.append(ANSWER_FORMAT)
    return "\n".join(lines)


def relation_words(rel: Relation) -> str:
    other = "z" if rel.axis in (None, "x") else "x"
    return _RELATION_WORDS[rel.type].format(a=rel.a, b=rel.b, other=other)


def _object_lines(objects: list[ObjectSpec]) -> list[str]:
    """One line per object, or per group of identical ones (a counted group: "two chairs")."""
    groups: list[list[ObjectSpec]] = []
    for spec in objects:
        same = next((g for g in groups if _alike(g[0], spec)), None)
        if same is None:
            groups.append([spec])
        else:
            same.append(spec)
    lines = []
    for group in groups:
        spec, size = group[0], " x ".join(_n(v) for v in group[0].size)
        if len(group) == 1:
            article = "an" if spec.color[0] in "aeiou" else "a"
            lines.append(f"{spec.id}: {article} {spec.color} {spec.kind}, {spec.shape} {size}")
        else:
            count = _NUMBER_WORDS.get(len(group), str(len(group)))
            ids = ", ".join(o.id for o in group)
            lines.append(f"{ids}: {count} {spec.color} {spec.kind}s, {spec.shape} {size} each")
    return lines


def _alike(a: ObjectSpec, b: ObjectSpec) -> bool:
    return (a.kind, a.shape, a.size, a.color) == (b.kind, b.shape, b.size, b.color)


def _n(value: float) -> str:
    return f"{value:g}"
