"""What scenes are made of: object kinds with their shape and typical size, and the colours."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    shape: str
    size: tuple[float, float, float]  # width, height, depth in metres, before the generator's jitter


# Floor furniture; `SURFACES` can hold an item on top.
FURNITURE = (
    Kind("table", "box", (1.2, 0.75, 0.8)),
    Kind("desk", "box", (1.4, 0.75, 0.7)),
    Kind("crate", "box", (0.6, 0.6, 0.6)),
    Kind("cabinet", "box", (0.9, 1.0, 0.5)),
    Kind("barrel", "cylinder", (0.6, 0.9, 0.6)),
    Kind("shelf", "box", (1.0, 1.8, 0.4)),
    Kind("sofa", "box", (2.0, 0.9, 0.9)),
)
SURFACES = ("table", "desk", "crate", "cabinet", "barrel")

# Small things that stand on a surface.
ITEMS = (
    Kind("vase", "cylinder", (0.2, 0.35, 0.2)),
    Kind("lamp", "cylinder", (0.25, 0.5, 0.25)),
    Kind("ball", "sphere", (0.3, 0.3, 0.3)),
    Kind("box", "box", (0.4, 0.3, 0.3)),
    Kind("book", "box", (0.25, 0.05, 0.2)),
)

# Seats come in counted groups and face a piece of furniture.
SEATS = (
    Kind("chair", "box", (0.5, 0.9, 0.5)),
    Kind("stool", "cylinder", (0.4, 0.6, 0.4)),
)

COLORS = {
    "red": "#c0392b",
    "green": "#27ae60",
    "blue": "#2e6fd8",
    "yellow": "#f1c40f",
    "white": "#ecf0f1",
    "black": "#2c2c2c",
    "orange": "#e67e22",
    "purple": "#8e44ad",
    "brown": "#8b5a2b",
    "grey": "#95a5a6",
}
