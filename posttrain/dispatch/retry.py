"""Retries with exponential backoff: how long a failed job waits, and when to give up."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4  # attempts in all, the first one included
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.backoff_s < 0 or self.backoff_max_s < 0:
            raise ValueError("backoff times must be >= 0")

    def delay(self, failures: int) -> float:
        """Seconds to wait before the next attempt after `failures` failed ones (>= 1):
        backoff_s, 2 backoff_s, 4 backoff_s, ... capped at backoff_max_s."""
        if failures < 1:
            return 0.0
        return min(self.backoff_max_s, self.backoff_s * 2 ** (failures - 1))

    def gives_up(self, failures: int) -> bool:
        return failures >= self.max_attempts
