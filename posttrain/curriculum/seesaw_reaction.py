"""What the run does about a seesaw alarm (`[monitor] reaction`).

none      log it
reweight  multiply the falling domain's weight by `factor` at each alarm (up to `max_boost`)
          and drop the boost once a later evaluation no longer shows it below its best
refresh   the next `refresh_steps` steps draw every prompt from the falling domain
"""

from __future__ import annotations

from posttrain.curriculum.seesaw import Alarm


class SeesawReaction:
    def __init__(self, kind: str = "none", factor: float = 2.0, max_boost: float = 8.0, refresh_steps: int = 2) -> None:
        self.kind, self.factor, self.max_boost, self.refresh_steps = kind, factor, max_boost, refresh_steps
        self.boosts: dict[str, float] = {}
        self.refresh: tuple[str, int] | None = None  # (domain, last step drawn only from it)

    def on_alarms(self, step: int, alarms: list[Alarm]) -> list[str]:
        """React to this evaluation's alarms; one line per action taken."""
        actions = []
        for alarm in alarms:
            domain = alarm.falling.domain
            if self.kind == "reweight":
                self.boosts[domain] = min(self.boosts.get(domain, 1.0) * self.factor, self.max_boost)
                actions.append(f"reweight: {domain} weight x{self.boosts[domain]:g} until it recovers")
            elif self.kind == "refresh" and (self.refresh is None or step > self.refresh[1]):
                self.refresh = (domain, step + self.refresh_steps)
                actions.append(f"refresh: steps {step + 1}-{step + self.refresh_steps} draw only from {domain}")
        return actions

    def on_recovered(self, domains: list[str]) -> list[str]:
        """Domains no longer below their best: their boost ends."""
        ended = [d for d in domains if d in self.boosts]
        for domain in ended:
            del self.boosts[domain]
        return [f"reweight: {d} recovered; its weight is back to normal" for d in ended]

    def weights(self, weights: dict[str, float]) -> dict[str, float]:
        return {d: w * self.boosts.get(d, 1.0) for d, w in weights.items()}

    def refresh_domain(self, step: int) -> str | None:
        """The domain step `step` draws only from, during a refresh."""
        if self.refresh is not None and step <= self.refresh[1]:
            return self.refresh[0]
        return None

    def state_dict(self) -> dict:
        return {"boosts": dict(self.boosts), "refresh": list(self.refresh) if self.refresh else None}

    def load_state_dict(self, state: dict) -> None:
        self.boosts = dict(state.get("boosts", {}))
        refresh = state.get("refresh")
        self.refresh = (refresh[0], int(refresh[1])) if refresh else None
