"""Joint training's watch over its domains, during the RL loop: every `[monitor] every` steps a
fixed held-out subset per domain is evaluated with the current weights, the seesaw monitor
compares it with each domain's best (posttrain.curriculum.seesaw), the configured reaction
adjusts the mixture, and the alarms go to the step's record, the console and summary.json.
With `domains_per_check`, each check covers the next domains in turn (the turn follows from the
number of checks in the monitor's history, so a resumed run goes on where it was). With
`stage_items`, a check is sequential: the due domains' items are evaluated a stage at a time (one
batch per stage), and a domain whose items so far fell no more often than they rose against its
best stops there (posttrain.curriculum.seesaw.steady_so_far). `monitor/eval_share` is the
trainer's wait for the checks over the time since the last one, `monitor/items_evaluated` against
`monitor/items_planned` what the early stops saved, and summary.json's `monitor_cost` the
run's whole wait as a share of its loop time.

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
from posttrain.curriculum.seesaw import steady_so_far
from posttrain.observe.metrics import read_metrics
from posttrain.tasks.domains import DomainMixture

ALARMS_KEY = "seesaw_alarms"  # in a step's record: the alarms that evaluation raised


class DomainMonitor:
    def __init__(self, config: RunConfig, mixture: DomainMixture, evals, say) -> None:
        self.config, self.mixture, self.evals, self.say = config, mixture, evals, say
        self.items = mixture.monitored_items(config.monitor.items)
        self._pending: tuple[int, Future] | None = None  # (step, its result) of a background evaluation
        self._since = time.perf_counter()  # the end of the last check's wait
        self.waited_s, self.checks, self.evaluated, self.planned = 0.0, 0, 0, 0  # this process's checks

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

    def _check(self, label: str, names: list[str], bests: dict[str, list[bool] | None]) -> dict[str, list[bool]]:
        """Per due domain, the correctness of its items evaluated (all of them, or with
        `stage_items` the prefix up to the stage where it stopped). `bests`: each domain's best
        results so far, taken before the check (it may run in a thread)."""
        stage = self.config.monitor.stage_items or max((len(self.items[n]) for n in names), default=1)
        results: dict[str, list[bool]] = {name: [] for name in names}
        active = list(names)
        while active:
            tasks = {name: self.items[name][len(results[name]) : len(results[name]) + stage] for name in active}
            scored = self.evals.run(label, [t for part in tasks.values() for t in part]).per_item
            for name, part in tasks.items():
                results[name] += [scored[t.id] >= 1.0 for t in part]
            active = [
                name
                for name in active
                if len(results[name]) < len(self.items[name])
                and not (bests[name] is not None and steady_so_far(bests[name], results[name]))
            ]
        return results

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
        label, names = f"monitor @ step {step}", self.domains_due()
        bests = {name: self.mixture.monitor.best_items(name) for name in names}
        hold = getattr(self.evals.engine, "weights_held", None)
        if not (background and hold):
            started = time.perf_counter()
            result = self._check(label, names, bests)
            return record | self._observe(step, result, time.perf_counter() - started, waited_s=None)
        future: Future = Future()

        def run() -> None:
            started = time.perf_counter()
            try:
                with hold():
                    result = self._check(label, names, bests)
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

    def _observe(self, step: int, results: dict[str, list[bool]], eval_s: float, waited_s: float | None) -> dict:
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
            "monitor/items_evaluated": float(sum(map(len, results.values()))),
            "monitor/items_planned": float(sum(len(self.items[name]) for name in results)),
            "monitor/stopped_early": float(sum(len(v) < len(self.items[name]) for name, v in results.items())),
        }
        self._since = now
        self.waited_s += wait_s
        self.checks += 1
        self.evaluated += int(record["monitor/items_evaluated"])
        self.planned += int(record["monitor/items_planned"])
        if alarms:
            record[ALARMS_KEY] = [alarm.to_json() for alarm in alarms]
        if actions:
            record["monitor/actions"] = actions
        return record

    def cost(self, loop_s: float) -> dict:
        """summary.json's `monitor_cost`: the trainer's wait for this process's checks as a share of
        its training loop's time, and the items the early stops skipped."""
        if not self.config.monitor.every:
            return {}
        return {
            "monitor_cost": {
                "checks": self.checks,
                "trainer_wait_s": self.waited_s,
                "loop_s": loop_s,
                "eval_share": self.waited_s / max(loop_s, 1e-9),
                "items_evaluated": self.evaluated,
                "items_planned": self.planned,
            }
        }


def alarms_of_run(metrics_path: Path) -> list[dict]:
    """Every alarm the run's monitor raised, from metrics.jsonl (which a resume keeps in step)."""
    return [alarm for record in read_metrics(metrics_path) for alarm in record.get(ALARMS_KEY, [])]
