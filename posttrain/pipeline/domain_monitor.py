"""Joint training's watch over its domains, during the RL loop: every `[monitor] every` steps a
fixed held-out subset per domain is evaluated with the current weights, the seesaw monitor
compares it with each domain's best (posttrain.curriculum.seesaw), the configured reaction
adjusts the mixture, and the alarms go to the step's record, the console and summary.json.
With `domains_per_check`, each check covers the next domains in turn (the turn follows from the
number of checks in the monitor's history, so a resumed run goes on where it was);
`monitor/eval_share` is the trainer's wait for the checks over the time since the last one.

In async mode the evaluation does not stall training: it runs in a thread through the rollout
engine, under a weight hold (RolloutEngine.weights_held), so every item is answered by the weights
of the step it is labelled with while the trainer takes the next steps; its results land in the
record of the step during which it finished (`monitor/step` says which weights they are of)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from pathlib import Path

from posttrain.config import RunConfig
from posttrain.observe.metrics import read_metrics
from posttrain.tasks.domains import DomainMixture

ALARMS_KEY = "seesaw_alarms"  # in a step's record: the alarms that evaluation raised


class DomainMonitor:
    def __init__(self, config: RunConfig, mixture: DomainMixture, evals, say) -> None:
        self.config, self.mixture, self.evals, self.say = config, mixture, evals, say
        self.items = mixture.monitored_items(config.monitor.items)
        self._pending: tuple[int, Future] | None = None  # (step, its result) of a background evaluation
        self._since = time.perf_counter()  # the end of the last check's wait

    def start(self, before) -> None:
        """The evaluation before training (an EvalResult of the whole held-out set, which holds the
        monitored items) is the monitor's first point; a resumed run has its history already."""
        if self.config.monitor.every and not self.mixture.monitor.history:
            self.mixture.after_evaluation(0, self._results(before))

    def _results(self, result) -> dict[str, list[bool]]:
        return {
            name: [result.per_item[t.id] >= 1.0 for t in items]
            for name, items in self.items.items()
            if all(t.id in result.per_item for t in items)
        }

    def domains_due(self) -> list[str]:
        """The domains the next check covers: all, or the next `domains_per_check` in turn."""
        names, size = sorted(self.items), self.config.monitor.domains_per_check
        if not size or size >= len(names):
            return names
        turns = -(-len(names) // size)
        turn = (len(self.mixture.monitor.history) - 1) % turns  # the first entry is the evaluation before training
        return names[turn * size : (turn + 1) * size]

    def due(self, step: int) -> bool:
        every = self.config.monitor.every
        return bool(every) and step % every == 0

    def evaluate(self, step: int, background: bool = False) -> dict:
        """Evaluate the monitored items, feed the monitor and the reaction; the record's fields.
        `background`: start the evaluation and return at once ({}); collect() brings its fields."""
        record = self.collect(wait=True)  # one at a time: the previous evaluation first
        label, tasks = f"monitor @ step {step}", [t for name in self.domains_due() for t in self.items[name]]
        hold = getattr(self.evals.engine, "weights_held", None)
        if not (background and hold):
            started = time.perf_counter()
            result = self.evals.run(label, tasks)
            return record | self._observe(step, result, time.perf_counter() - started, waited_s=None)
        future: Future = Future()

        def run() -> None:
            started = time.perf_counter()
            try:
                with hold():
                    result = self.evals.run(label, tasks)
                future.set_result((result, time.perf_counter() - started))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the driver by collect()
                future.set_exception(exc)

        self._pending = (step, future)
        threading.Thread(target=run, name=f"monitor-eval-{step}", daemon=True).start()
        return record

    def collect(self, wait: bool = False) -> dict:
        """The record fields of a background evaluation that has finished ({} if none has);
        `wait`: block until the one in flight finishes (the last step, or the next is due)."""
        if self._pending is None or not (wait or self._pending[1].done()):
            return {}
        step, future = self._pending
        started = time.perf_counter()
        result, eval_s = future.result()
        waited_s = time.perf_counter() - started
        self._pending = None
        return self._observe(step, result, eval_s, waited_s=waited_s)

    def _observe(self, step: int, result, eval_s: float, waited_s: float | None) -> dict:
        results = self._results(result)
        metrics, alarms, actions = self.mixture.after_evaluation(step, results)
        for alarm in alarms:
            self.say(alarm.message())
        for action in actions:
            self.say(action)
        # the trainer's wait for it: all of it inline, what was left of it in the background
        wait_s = eval_s if waited_s is None else waited_s
        now = time.perf_counter()
        record = dict(metrics) | {
            "monitor/step": step,
            "monitor/eval_s": eval_s,
            "monitor/trainer_wait_s": wait_s,
            "monitor/eval_share": wait_s / max(now - self._since, 1e-9),
            "monitor/domains_checked": float(len(results)),
        }
        self._since = now
        if alarms:
            record[ALARMS_KEY] = [alarm.to_json() for alarm in alarms]
        if actions:
            record["monitor/actions"] = actions
        return record


def alarms_of_run(metrics_path: Path) -> list[dict]:
    """Every alarm the run's monitor raised, from metrics.jsonl (which a resume keeps in step)."""
    return [alarm for record in read_metrics(metrics_path) for alarm in record.get(ALARMS_KEY, [])]
