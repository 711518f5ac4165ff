"""Joint training's watch over its domains, during the RL loop: every `[monitor] every` steps a
fixed held-out subset per domain is evaluated with the current weights, the seesaw monitor
compares it with each domain's best (posttrain.curriculum.seesaw), the configured reaction
adjusts the mixture, and the alarms go to the step's record, the console and summary.json."""

from __future__ import annotations

from pathlib import Path

from posttrain.config import RunConfig
from posttrain.observe.metrics import read_metrics
from posttrain.tasks.domains import DomainMixture

ALARMS_KEY = "seesaw_alarms"  # in a step's record: the alarms that evaluation raised


class DomainMonitor:
    def __init__(self, config: RunConfig, mixture: DomainMixture, evals, say) -> None:
        self.config, self.mixture, self.evals, self.say = config, mixture, evals, say
        self.items = mixture.monitored_items(config.monitor.items)

    def start(self, before) -> None:
        """The evaluation before training (an EvalResult of the whole held-out set, which holds the
        monitored items) is the monitor's first point; a resumed run has its history already."""
        if self.config.monitor.every and not self.mixture.monitor.history:
            self.mixture.after_evaluation(0, self._results(before))

    def _results(self, result) -> dict[str, list[bool]]:
        return {name: [result.per_item[t.id] >= 1.0 for t in items] for name, items in self.items.items()}

    def due(self, step: int) -> bool:
        every = self.config.monitor.every
        return bool(every) and step % every == 0

    def evaluate(self, step: int) -> dict:
        """Evaluate the monitored items, feed the monitor and the reaction; the record's fields."""
        tasks = [t for items in self.items.values() for t in items]
        result = self.evals.run(f"monitor @ step {step}", tasks)
        metrics, alarms, actions = self.mixture.after_evaluation(step, self._results(result))
        for alarm in alarms:
            self.say(alarm.message())
        for action in actions:
            self.say(action)
        record = dict(metrics)
        if alarms:
            record[ALARMS_KEY] = [alarm.to_json() for alarm in alarms]
        if actions:
            record["monitor/actions"] = actions
        return record


def alarms_of_run(metrics_path: Path) -> list[dict]:
    """Every alarm the run's monitor raised, from metrics.jsonl (which a resume keeps in step)."""
    return [alarm for record in read_metrics(metrics_path) for alarm in record.get(ALARMS_KEY, [])]
