"""Each cell's pass rate, estimated from its most recent episodes."""

from __future__ import annotations

from collections import deque

Cell = tuple[str, int]  # (family, difficulty)


class PassRates:
    """A window of the last `window` episode outcomes per cell, and when each cell was last drawn."""

    def __init__(self, window: int = 32, min_episodes: int = 4) -> None:
        self.window, self.min_episodes = window, min_episodes
        self.outcomes: dict[Cell, deque[bool]] = {}
        self.last_drawn: dict[Cell, int] = {}

    def add(self, cell: Cell, passed: list[bool]) -> None:
        self.outcomes.setdefault(cell, deque(maxlen=self.window)).extend(bool(p) for p in passed)

    def drawn(self, cell: Cell, step: int) -> None:
        self.last_drawn[cell] = step

    def estimate(self, cell: Cell) -> float | None:
        """The mean of the window; None until the cell has `min_episodes` outcomes."""
        seen = self.outcomes.get(cell)
        if not seen or len(seen) < self.min_episodes:
            return None
        return sum(seen) / len(seen)

    def metrics(self, prefix: str = "curriculum") -> dict[str, float]:
        """{"curriculum/<family>/d<k>": pass rate} for every cell with an estimate."""
        return {
            f"{prefix}/{family}/d{difficulty}": rate
            for (family, difficulty) in sorted(self.outcomes)
            if (rate := self.estimate((family, difficulty))) is not None
        }

    def state_dict(self) -> dict:
        return {
            "outcomes": [[f, d, list(v)] for (f, d), v in self.outcomes.items()],
            "last_drawn": [[f, d, s] for (f, d), s in self.last_drawn.items()],
        }

    def load_state_dict(self, state: dict) -> None:
        self.outcomes = {(f, d): deque(v, maxlen=self.window) for f, d, v in state["outcomes"]}
        self.last_drawn = {(f, d): s for f, d, s in state["last_drawn"]}
