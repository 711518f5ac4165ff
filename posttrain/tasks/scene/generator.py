"""Seeded scene tasks with a difficulty knob: the same (difficulty, seed) gives the same task.

    difficulty  floor objects  items on top  facing seats  walkway  relations stated
    1           2              1             0             no       on_top_of, beside, left_of
    2           3              1-2           2             no       + facing, aligned
    3           4              2-3           3             yes      more of each, + clear_path
    4, 5, ...   one more floor object and seat per level past 3, all of the above

The room is sized so the reference solver's layout fits with slack; sizes are jittered by up to
20% and rounded to 5 cm. Every stated relation is one the solver's layout satisfies by
construction (solver.py), which tests check over many seeds and every difficulty."""

from __future__ import annotations

import math
import random

from posttrain.tasks.scene.catalogue import COLORS, FURNITURE, ITEMS, SEATS, SURFACES, Kind
from posttrain.tasks.scene.schema import ClearPath, ObjectSpec, Relation, Room, SceneTask
from posttrain.tasks.scene.solver import PATH_MARGIN, ROW_GAP, ROW_SPACING, WALL_MARGIN, turning_radius

MAX_DIFFICULTY = 6
PATH_OFFSET = 0.15  # walkway starts this far in front of the back row


def plan(difficulty: int) -> dict:
    """How many of each part a difficulty asks for."""
    extra = max(0, difficulty - 3)
    return {
        "floor": {1: 2, 2: 3}.get(difficulty, 4 + extra),
        "stacks": {1: (1, 1), 2: (1, 2)}.get(difficulty, (2, 3)),
        "seats": {1: 0, 2: 2}.get(difficulty, 3 + extra),
        "path": difficulty >= 3,
        "beside": {1: 1, 2: 1}.get(difficulty, 2),
        "left_of": {1: 1, 2: 1}.get(difficulty, 2),
        "aligned": {1: 0, 2: 1}.get(difficulty, 2),
    }


def check_difficulty(difficulty: object) -> int:
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 1 <= difficulty <= MAX_DIFFICULTY:
        raise ValueError(f"difficulty must be an integer from 1 to {MAX_DIFFICULTY}, not {difficulty!r}")
    return difficulty


def generate(difficulty: int, seed: int) -> SceneTask:
    check_difficulty(difficulty)
    rng = random.Random(f"scene:{difficulty}:{seed}")
    parts = plan(difficulty)
    counters: dict[str, int] = {}

    def make(kind: Kind, color: str | None = None) -> ObjectSpec:
        counters[kind.name] = counters.get(kind.name, 0) + 1
        size = tuple(_jitter(rng, side) for side in kind.size)
        return ObjectSpec(
            id=f"{kind.name}_{counters[kind.name]}",
            kind=kind.name,
            shape=kind.shape,
            size=_shape_size(kind.shape, size),
            color=color or rng.choice(list(COLORS)),
        )

    surfaces = [k for k in FURNITURE if k.name in SURFACES]
    stack_count = rng.randint(*parts["stacks"])
    floor_kinds = rng.sample(surfaces, stack_count) + [
        rng.choice(FURNITURE) for _ in range(parts["floor"] - stack_count)
    ]
    rng.shuffle(floor_kinds)
    back = [make(kind) for kind in floor_kinds]
    relations: list[Relation] = []
    supports = [o for o in back if o.kind in SURFACES]
    items = []
    for surface in rng.sample(supports, stack_count):
        item = make(rng.choice(ITEMS))
        items.append(item)
        relations.append(Relation(type="on_top_of", a=item.id, b=surface.id))
    seats = []
    if parts["seats"]:
        seat_kind, color = rng.choice(SEATS), rng.choice(list(COLORS))
        first = make(seat_kind, color)
        seats = [first] + [
            first.model_copy(update={"id": f"{seat_kind.name}_{i}"}) for i in range(2, parts["seats"] + 1)
        ]
        counters[seat_kind.name] = parts["seats"]
        target = rng.choice(back)
        relations += [Relation(type="facing", a=s.id, b=target.id) for s in seats]
    relations += _row_relations(rng, back, parts)
    if len(seats) > 1:
        i = rng.randrange(len(seats) - 1)
        relations.append(Relation(type="beside", a=seats[i].id, b=seats[i + 1].id))
        if parts["aligned"]:
            a, b = rng.sample(seats, 2)
            relations.append(Relation(type="aligned", a=a.id, b=b.id, axis="x"))
    room, clear_path = _room(rng, back, seats, parts["path"])
    rng.shuffle(relations)
    return SceneTask(
        difficulty=difficulty,
        seed=seed,
        room=room,
        objects=back + items + seats,
        relations=relations,
        clear_path=clear_path,
    )


def _row_relations(rng: random.Random, back: list[ObjectSpec], parts: dict) -> list[Relation]:
    """Relations within the back row, which the solver lays out left to right in listed order."""
    relations = []
    neighbours = list(range(len(back) - 1))
    for i in rng.sample(neighbours, min(parts["beside"], len(neighbours))):
        a, b = (back[i], back[i + 1]) if rng.random() < 0.5 else (back[i + 1], back[i])
        relations.append(Relation(type="beside", a=a.id, b=b.id))
    pairs = [(i, j) for i in range(len(back)) for j in range(i + 1, len(back))]
    for i, j in rng.sample(pairs, min(parts["left_of"], len(pairs))):
        relations.append(Relation(type="left_of", a=back[i].id, b=back[j].id))
    for i, j in rng.sample(pairs, min(parts["aligned"], len(pairs))):
        relations.append(Relation(type="aligned", a=back[i].id, b=back[j].id, axis="x"))
    return relations


def _room(rng: random.Random, back: list[ObjectSpec], seats: list[ObjectSpec], path: bool):
    back_width = sum(o.size[0] for o in back) + ROW_GAP * (len(back) - 1)
    radii = [turning_radius(o) for o in seats]
    front_width = sum(2 * r for r in radii) + ROW_GAP * max(len(seats) - 1, 0)
    back_depth = max(o.size[2] for o in back)
    path_width = _round(rng.uniform(0.8, 1.2)) if path else 0.0
    between = PATH_OFFSET + path_width + PATH_MARGIN if path else ROW_SPACING
    front_depth = between + 2 * max(radii) if seats else 0.0
    width = _half_up(max(back_width, front_width) + 2 * WALL_MARGIN + rng.uniform(0.5, 1.5))
    depth = _half_up(2 * WALL_MARGIN + back_depth + front_depth + rng.uniform(0.5, 1.5))
    clear_path = None
    if path:
        z_min = round(-depth / 2 + WALL_MARGIN + back_depth + PATH_OFFSET, 2)
        clear_path = ClearPath(z_min=z_min, z_max=round(z_min + path_width, 2))
    return Room(width=width, depth=depth, height=3.0), clear_path


def _jitter(rng: random.Random, side: float) -> float:
    return max(0.05, _round(side * rng.uniform(0.8, 1.2)))


def _shape_size(shape: str, size: tuple[float, float, float]) -> tuple[float, float, float]:
    """A cylinder is as wide as deep; a sphere is the same on every side."""
    if shape == "cylinder":
        return (size[0], size[1], size[0])
    if shape == "sphere":
        return (size[0], size[0], size[0])
    return size


def _round(value: float) -> float:
    return round(round(value / 0.05) * 0.05, 2)


def _half_up(value: float) -> float:
    return math.ceil(value * 2) / 2
