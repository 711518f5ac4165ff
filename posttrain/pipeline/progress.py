"""The live display of a training run: a rich progress bar for steps and evaluations."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from posttrain.console import draws_live, progress_bar


class TrainingProgress:
    def __init__(self, steps: int, n_eval_items: int, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.progress = progress_bar(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}"),
            out=self.console,
            transient=False,
        )
        self.n_eval_items = n_eval_items
        self.train_task = self.progress.add_task("train", total=steps, info="")
        self.eval_task = None

    def __enter__(self) -> TrainingProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def set_completed(self, step: int) -> None:
        self.progress.update(self.train_task, completed=step)

    def start_eval(self, label: str, total: int | None = None) -> None:
        self.eval_task = self.progress.add_task(label, total=total or self.n_eval_items, info="")

    def advance_eval(self, n: int) -> None:
        self.progress.advance(self.eval_task, n)

    def end_eval(self, label: str, accuracy: float) -> None:
        self.progress.update(self.eval_task, info=f"accuracy {accuracy:.3f}")
        if not draws_live(self.console):
            self.console.print(f"{label}: accuracy {accuracy:.3f}", highlight=False)
        self.progress.stop_task(self.eval_task)

    def step_done(self, step: int, record: dict) -> None:
        if record.get("loss") is not None:
            update = f"loss {record['loss']:+.4f}  mismatch {record.get('logprob_mismatch_max', 0.0):.1e}"
        else:  # dynamic sampling kept no group: the trainer did not step
            update = f"no update ({record.get('groups_kept', 0)} of {record.get('groups', 0)} groups kept)"
        info = f"reward {record['reward_mean']:.3f}  {update}  {record['step_s']:.1f}s/step"
        if record.get("max_staleness"):  # async: how off-policy the batch was, and what waits
            info += (
                f"  gap {record['staleness_max']}/{record['max_staleness']}  buffered {record['buffered']}"
                f"  in flight {record['in_flight']}  trainer idle {record['trainer_idle_frac']:.0%}"
            )
        if record.get("dispatch/retries"):
            info += f"  retries {record['dispatch/retries']}"
        self.progress.update(self.train_task, completed=step, info=info)
        if not draws_live(self.console):  # a log file gets one line per step instead of a live bar
            self.console.print(f"step {step}/{self.progress.tasks[self.train_task].total}  {info}", highlight=False)
