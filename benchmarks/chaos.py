#!/usr/bin/env python
"""A chaos run: an async agent RL run on generated terminal tasks (examples/chaos.toml) while
seeded random faults fire, then checks that nothing was lost, repeated or broken.

    OMP_NUM_THREADS=1 nice -n 10 benchmarks/chaos.py --duration 1200 --baseline --out FILE.json

`posttrain train` runs in a subprocess (rollouts in worker processes, every command of an
episode in a bwrap sandbox). For --duration seconds from its first recorded step (model loading
and the held-out evaluation before are not what is tested), every --fault-interval LOW,HIGH seconds
(drawn with --seed) one fault fires, SIGKILL of one of:

    worker    a rollout worker process that is running a job (from the run's dispatch.json)
    sandbox   a bwrap process under the run (a command of an episode, its setup or its verifier)
    engine    not a SIGKILL: the engine's next step fails (a `raise-engine_step` file in the
              trainer's POSTTRAIN_FAULTS_TRIGGER directory, posttrain/faults.py), so every call
              in flight fails with EngineError, as when an engine replica dies under its
              callers; their episodes end as `engine_error` and their jobs run again
    trainer   the `posttrain train` process itself; the script restarts it with
              `posttrain train --resume --out RUN`, as a user's supervisor would: resume after a
              trainer kill is by restart, nothing inside the run brings it back
    engine_replica  not applicable: this run's engine is a thread of the trainer process (engine
              replicas are Ray actors, `[engine] replicas`): its process kill is the trainer
              kill, a failure under its callers the `engine` fault

`--force-trainer-kill-after N` also kills the trainer once N steps are recorded, so at least one
kill and resume happen whatever the speed. When the duration is over the script stops the
trainer, sets the run's `[train] steps` to the step after the last recorded one and resumes it,
fault-free, to its end (the last checkpoint and the held-out evaluation after). Then it checks,
from the run directory:

- each step recorded once, in order; every stream slot (step:index, the data cursor's unit)
  trained at most once, none lost (after K steps every slot of steps up to K - max_staleness is
  trained: async steps take whichever admitted groups finish first), and (with --baseline) the
  same task in each slot as the undisturbed run;
- no episode lost or counted twice: trajectories.sqlite holds each trained group's group_size
  episodes once (step, task, sample index), and nothing of steps not recorded;
- every checkpoint left loads (the model with transformers, the trainer and pipeline state with
  the project's loaders), and no half-written one is left;
- masked episodes counted: the steps' `episodes_masked` / `masked/<mode>` equal the stored
  episodes whose failure mode is an infrastructure failure;
- with --baseline, the same config run undisturbed for the same steps in a fresh directory: the
  held-out pass rates of both and the paired bootstrap CI of their difference.

Prints JSON (and writes it to --out) with the `cpu` record; exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import tomli_w

from posttrain.agent.trajectory import INFRA_FAILURES
from posttrain.config import dump_config, load_config, read_toml
from posttrain.console import emit_benchmark
from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.faults import TRIGGER_ENV
from posttrain.models.loading import load_model
from posttrain.observe.metrics import read_metrics
from posttrain.pipeline.run_dir import RunDir
from posttrain.train.checkpoint import list_checkpoints, load_checkpoint_state, load_pipeline_state

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "chaos.toml"
FAULT_KINDS = ("worker", "sandbox", "engine", "trainer")
NOT_APPLICABLE = {
    "engine_replica": "the run's engine is a thread of the trainer process (engine replicas are Ray actors, "
    "[engine] replicas, not used here): killing its process is the trainer kill; a failure under its callers "
    "(their calls fail with EngineError, as when a replica dies) is the engine fault"
}
ENGINE_TRIGGER = "raise-engine_step"  # posttrain/faults.py: the engine's next step raises
STEPS_CAP = 100_000  # the run is ended by the script, not by its step count
TINY = {  # --tiny: a random tiny model and short episodes, for the smoke test
    "model": {"name": "tiny-llama"},
    "agent": {"max_steps": 2, "reply_tokens": 16},
    "rollout": {"group_size": 2},
    "domains": {"heldout": 4},
    "train": {"checkpoint_every": 1, "keep_checkpoints": 1000},
}


# ---- the run's config ---------------------------------------------------------------------------


def write_config(path: Path, tiny: bool, model: str | None, steps: int) -> Path:
    data = read_toml(EXAMPLE)
    if tiny:
        for table, values in TINY.items():
            targets = data[table] if isinstance(data[table], list) else [data[table]]
            for target in targets:
                target.update(values)
    if model:
        data["model"]["name"] = model
    data["train"]["steps"] = steps
    path.write_text(tomli_w.dumps(data))
    load_config(path)  # refused here, with the field named, rather than by the subprocess
    return path


def set_run_steps(run: Path, steps: int) -> None:
    """The run's own config.toml (what --resume reads) with [train] steps = `steps`."""
    config = load_config(RunDir(run).config)
    config.train.steps = steps
    RunDir(run).config.write_text(dump_config(config))


# ---- processes ----------------------------------------------------------------------------------


def process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command name) of every live process (zombies left out), from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
        if state != "Z":
            table[int(entry.name)] = (int(ppid), name)
    return table


def descendants(root: int, table: dict[int, tuple[int, str]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def busy_worker_pids(run: Path, trainer: int) -> list[int]:
    """Rollout worker processes of this trainer that are running a job (dispatch.json)."""
    try:
        status = json.loads((run / "dispatch.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return []
    mine = descendants(trainer, process_table())
    workers = status.get("executor", {}).get("workers", [])
    return [w["pid"] for w in workers if w.get("job") and w.get("pid") in mine]


SANDBOX_COMMANDS = ("bwrap", "sandbox-launche")  # the launcher (comm cut to 15 characters) execs bwrap


def sandbox_pids(trainer: int) -> list[int]:
    """The outermost process of each sandboxed command running under this trainer."""
    table = process_table()
    mine = descendants(trainer, table)
    return [
        p
        for p in sorted(mine)
        if table[p][1] in SANDBOX_COMMANDS and table.get(table[p][0], (0, ""))[1] not in SANDBOX_COMMANDS
    ]


# ---- the trainer under a supervisor -------------------------------------------------------------


class Trainer:
    """`posttrain train` in a subprocess, restarted with --resume after each kill."""

    def __init__(self, config: Path, run: Path, logs: Path) -> None:
        self.config, self.run, self.logs = config, run, logs
        self.triggers = logs / "fault-triggers"  # the trainer's POSTTRAIN_FAULTS_TRIGGER directory
        self.triggers.mkdir(parents=True, exist_ok=True)
        self.sessions: list[dict] = []
        self.proc: subprocess.Popen | None = None

    def start(self, resume: bool) -> None:
        args = ["train", "--resume", "--out", str(self.run)] if resume else ["train", str(self.config)]
        if not resume:
            args += ["--out", str(self.run)]
        log = self.logs / f"trainer-{len(self.sessions)}.log"
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        env.pop("POSTTRAIN_FAULTS", None)
        env[TRIGGER_ENV] = str(self.triggers)
        with open(log, "w") as handle:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "posttrain.cli", *args], stdout=handle, stderr=subprocess.STDOUT, env=env
            )
        self.sessions.append({"resume": resume, "pid": self.proc.pid, "log": str(log), "started": time.time()})

    def kill(self) -> int:
        pid = self.proc.pid
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.sessions[-1]["exit"] = "killed"
        return pid

    def exited(self) -> int | None:
        code = self.proc.poll()
        if code is not None and "exit" not in self.sessions[-1]:
            self.sessions[-1]["exit"] = code
        return code

    def log_tail(self, chars: int = 3000) -> str:
        return Path(self.sessions[-1]["log"]).read_text(errors="replace")[-chars:]


def records(run: Path) -> list[dict]:
    return read_metrics(RunDir(run).metrics)


def fire(kind: str, trainer: Trainer, rng: random.Random, wait_s: float = 30.0) -> dict:
    """SIGKILL one process of `kind` (chosen with `rng`); waits up to `wait_s` for one to exist."""
    event = {"t": time.time(), "kind": kind, "steps_recorded": len(records(trainer.run))}
    if kind == "trainer":
        event["pid"] = trainer.kill()
        trainer.start(resume=RunDir(trainer.run).config.is_file())  # killed before it wrote one: anew
        return event
    deadline = time.monotonic() + wait_s
    if kind == "engine":
        trigger = trainer.triggers / ENGINE_TRIGGER
        trigger.touch()
        while time.monotonic() < deadline and trainer.exited() is None:
            if not trigger.exists():  # the engine took it: a step failed with its calls in flight
                return event
            time.sleep(0.02)
        trigger.unlink(missing_ok=True)
        event["skipped"] = f"no engine step within {wait_s:g} s"
        return event
    while time.monotonic() < deadline and trainer.exited() is None:
        pids = busy_worker_pids(trainer.run, trainer.proc.pid) if kind == "worker" else sandbox_pids(trainer.proc.pid)
        if pids:
            victim = rng.choice(pids)
            try:
                os.kill(victim, signal.SIGKILL)
                event["pid"] = victim
                return event
            except ProcessLookupError:  # it finished between the look and the kill
                pass
        time.sleep(0.02)
    event["skipped"] = f"no {kind} process alive within {wait_s:g} s"
    return event


def restart_if_killed(trainer: Trainer, events: list[dict]) -> None:
    """A supervisor's rule: a trainer SIGKILLed from outside the script (the OOM killer) is
    resumed and recorded as an unplanned fault; any other exit ends the chaos run as failed."""
    code = trainer.exited()
    if code is None:
        return
    if code != -signal.SIGKILL:
        raise SystemExit(f"chaos: the trainer exited with {code} on its own:\n{trainer.log_tail()}")
    events.append({"t": time.time(), "kind": "trainer", "pid": trainer.proc.pid, "unplanned": "SIGKILL from outside"})
    trainer.start(resume=RunDir(trainer.run).config.is_file())


def chaos(args, config: Path, run: Path, logs: Path) -> tuple[Trainer, list[dict]]:
    """The disturbed run: faults for args.duration seconds, then the run ended and finished."""
    rng = random.Random(args.seed)
    trainer = Trainer(config, run, logs)
    trainer.start(resume=False)
    events: list[dict] = []
    while not records(run):  # the clock starts at the first step: model load and eval before are not the test
        restart_if_killed(trainer, events)
        time.sleep(0.2)
    began = time.monotonic()
    next_fault = began + rng.uniform(*args.fault_interval)
    forced = args.force_trainer_kill_after is None
    while time.monotonic() - began < args.duration:
        restart_if_killed(trainer, events)
        if not forced and len(records(run)) >= args.force_trainer_kill_after:
            events.append({**fire("trainer", trainer, rng), "forced": True})
            forced = True
        elif time.monotonic() >= next_fault:
            events.append(fire(rng.choice(args.faults), trainer, rng))
            next_fault = time.monotonic() + rng.uniform(*args.fault_interval)
        time.sleep(0.1)
    trainer.kill()  # the end of the fault window: the run ends at the step after the last recorded
    steps = max([r["step"] for r in records(run)] + list_checkpoints(RunDir(run).checkpoints) + [0]) + 1
    set_run_steps(run, steps)
    trainer.start(resume=True)
    code = trainer.proc.wait()
    trainer.exited()
    if code != 0:
        raise SystemExit(f"chaos: the finishing session exited with {code}:\n{trainer.log_tail()}")
    return trainer, events


def baseline_run(config: Path, run: Path, steps: int, logs: Path) -> None:
    data = read_toml(config)
    data["train"]["steps"] = steps
    same = config.with_name("baseline.toml")
    same.write_text(tomli_w.dumps(data))
    with open(logs / "baseline.log", "w") as handle:
        code = subprocess.call(
            [sys.executable, "-m", "posttrain.cli", "train", str(same), "--out", str(run)],
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    if code != 0:
        raise SystemExit(f"chaos: the baseline run exited with {code}; see {logs / 'baseline.log'}")


# ---- the checks ---------------------------------------------------------------------------------


def check_steps_and_slots(got: list[dict], prompts: int, eta: int, baseline: list[dict] | None) -> dict:
    """A slot `s:i` is the i-th prompt admitted for step s; async steps train whichever admitted
    groups finish first, so after K steps every slot of steps up to K - eta (the staleness
    bound) is trained, none of a step past K + eta, K x prompts in all, each once."""
    k = len(got)
    steps = [r["step"] for r in got]
    slots = [s for r in got for s in r["stream_slots"]]
    due = {f"{step}:{i}" for step in range(1, k - eta + 1) for i in range(prompts)}
    result = {
        "steps_once_in_order": steps == list(range(1, k + 1)),
        "slots_trained": len(slots),
        "slots_repeated": sorted(s for s, n in Counter(slots).items() if n > 1),
        "slots_missing": sorted(due - set(slots)),
        "slots_not_yet_admitted": sorted(s for s in slots if int(s.split(":")[0]) > k + eta),
    }
    result["slots_once"] = (
        not result["slots_repeated"]
        and not result["slots_missing"]
        and not result["slots_not_yet_admitted"]
        and len(slots) == k * prompts
    )
    if baseline is not None:  # the data stream is the seed's: a slot holds the same task in both runs
        mine = {s: t for r in got for s, t in zip(r["stream_slots"], r["task_ids"])}
        theirs = {s: t for r in baseline for s, t in zip(r["stream_slots"], r["task_ids"])}
        both = set(mine) & set(theirs)
        result["slots_compared_with_baseline"] = len(both)
        result["same_tasks_as_baseline"] = bool(both) and all(mine[s] == theirs[s] for s in both)
    return result


def check_episodes(run: Path, got: list[dict], group_size: int) -> dict:
    """Each recorded step's groups: group_size stored episodes each, every one once."""
    db = sqlite3.connect(f"{RunDir(run).trajectories.resolve().as_uri()}?mode=ro", uri=True)
    rows = db.execute("SELECT step, task_id, sample_index, details FROM trajectories WHERE phase = 'train'").fetchall()
    db.close()
    stored = Counter((step, task, index) for step, task, index, _ in rows)
    expected = Counter((r["step"], task, index) for r in got for task in r["task_ids"] for index in range(group_size))
    repeated = sorted(k for k, n in stored.items() if n > expected.get(k, 0))
    lost = sorted(k for k, n in expected.items() if stored.get(k, 0) < n)
    modes = Counter(json.loads(details).get("failure_mode") for *_, details in rows)
    stored_masked = {m: n for m, n in modes.items() if m in INFRA_FAILURES}
    recorded_masked = Counter()
    for r in got:
        recorded_masked.update({k.removeprefix("masked/"): int(v) for k, v in r.items() if k.startswith("masked/")})
    return {
        "episodes_expected": sum(expected.values()),
        "episodes_stored": len(rows),
        "episodes_repeated": [list(k) for k in repeated[:20]],
        "episodes_lost": [list(k) for k in lost[:20]],
        "episodes_once": not repeated and not lost and len(rows) == sum(expected.values()),
        "episodes_masked": int(sum(r.get("episodes_masked", 0) for r in got)),
        "masked_by_mode_recorded": dict(recorded_masked),
        "masked_by_mode_stored": stored_masked,
        "masked_counted": dict(recorded_masked) == stored_masked
        and int(sum(r.get("episodes_masked", 0) for r in got)) == sum(stored_masked.values()),
        "failure_modes": {str(k): v for k, v in sorted(modes.items(), key=lambda kv: str(kv[0]))},
    }


def check_checkpoints(run: Path) -> dict:
    """Each checkpoint left loads: the model (transformers), trainer state, pipeline state."""
    checkpoints = RunDir(run).checkpoints
    loaded, failed = [], {}
    for step in list_checkpoints(checkpoints):
        path = checkpoints / f"step-{step}"
        try:
            state, trainer_state = load_checkpoint_state(path)
            model = load_model(f"hf:{path}")
            pipeline = load_pipeline_state(path)
            if state["step"] != step or not trainer_state or pipeline is None:
                raise ValueError(f"state.json step {state['step']}, pipeline state {pipeline is not None}")
            del model
            loaded.append(step)
        except Exception as exc:  # noqa: BLE001 - a checkpoint that does not load is the finding
            failed[step] = f"{type(exc).__name__}: {exc}"[:300]
    partial = sorted(p.name for p in checkpoints.iterdir() if p.name.startswith(".tmp")) if checkpoints.is_dir() else []
    return {
        "checkpoints_loaded": loaded,
        "checkpoints_failed": failed,
        "partial_checkpoints_left": partial,
        "checkpoints_load": bool(loaded) and not failed and not partial,
    }


def heldout(run: Path) -> dict[str, float]:
    return json.loads(RunDir(run).eval_after.read_text())["per_item"]


def compare_heldout(disturbed: dict[str, float], undisturbed: dict[str, float], seed: int) -> dict:
    items = sorted(set(disturbed) & set(undisturbed))
    delta, low, high = paired_bootstrap_ci(
        [undisturbed[i] for i in items], [disturbed[i] for i in items], samples=2000, seed=seed
    )
    return {
        "chaos_pass_rate": sum(disturbed[i] for i in items) / len(items),
        "baseline_pass_rate": sum(undisturbed[i] for i in items) / len(items),
        "delta": delta,
        "delta_ci95": [low, high],
        "n": len(items),
        "within_ci": low <= 0.0 <= high,
    }


def fault_counts(events: list[dict]) -> dict:
    fired = Counter(e["kind"] for e in events if "skipped" not in e and "unplanned" not in e)
    skipped = Counter(e["kind"] for e in events if "skipped" in e)
    return {
        "fired": {k: fired.get(k, 0) for k in FAULT_KINDS},
        "skipped": {k: skipped.get(k, 0) for k in FAULT_KINDS},
        "unplanned_trainer_kills": sum("unplanned" in e for e in events),
    }


# ---- main ---------------------------------------------------------------------------------------


def interval(text: str) -> tuple[float, float]:
    low, high = (float(n) for n in text.split(","))
    if not 0 < low <= high:
        raise argparse.ArgumentTypeError(f"{text!r}: want LOW,HIGH seconds with 0 < LOW <= HIGH")
    return low, high


def fault_kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in FAULT_KINDS]
    if not kinds or unknown:
        raise argparse.ArgumentTypeError(f"{text!r}: want a comma-separated subset of {','.join(FAULT_KINDS)}")
    return kinds


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=1200.0, help="seconds of faults (default 1200)")
    parser.add_argument(
        "--fault-interval", type=interval, default=(30.0, 90.0), help="LOW,HIGH seconds between faults (30,90)"
    )
    parser.add_argument(
        "--faults",
        type=fault_kinds,
        default=FAULT_KINDS,
        help=f"the fault menu, drawn from at random (default {','.join(FAULT_KINDS)}): worker and sandbox "
        "SIGKILL a busy rollout worker or a sandboxed command's bwrap, engine fails the engine's next step under "
        "its callers (as a dying replica does), trainer SIGKILLs the trainer and resumes it",
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds the faults' times, kinds and victims")
    parser.add_argument(
        "--force-trainer-kill-after", type=int, default=None, help="also kill the trainer once, after N steps"
    )
    parser.add_argument("--tiny", action="store_true", help="a tiny random model and short episodes (smoke test)")
    parser.add_argument("--model", default=None, help="replaces examples/chaos.toml's model (default SmolLM2-135M)")
    parser.add_argument("--baseline", action="store_true", help="also run it undisturbed and compare held-out")
    parser.add_argument("--workdir", type=Path, default=None, help="where the runs go (default: a new temp dir)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "chaos.json")
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="posttrain-chaos-"))
    work.mkdir(parents=True, exist_ok=True)
    config = write_config(work / "chaos.toml", args.tiny, args.model, STEPS_CAP)
    run, logs = work / "chaos", work / "logs"
    logs.mkdir(exist_ok=True)
    started = time.time()
    trainer, events = chaos(args, config, run, logs)
    chaos_s = time.time() - started
    got = records(run)
    settings = load_config(config)
    report = {
        "benchmark": "chaos",
        "model": settings.model.name,
        "duration_s": args.duration,
        "fault_interval_s": list(args.fault_interval),
        "fault_menu": list(args.faults),
        "seed": args.seed,
        "workdir": str(work),
        "chaos_wall_s": chaos_s,
        "steps": len(got),
        "prompts_per_step": settings.rollout.prompts_per_step,
        "group_size": settings.rollout.group_size,
        "trainer_sessions": len(trainer.sessions),
        "faults": {**fault_counts(events), "not_applicable": NOT_APPLICABLE, "events": events},
        "dispatch": {k: got[-1].get(k) for k in ("dispatch/worker_deaths", "dispatch/retries", "dispatch/failed")}
        if got
        else {},
        "resume_counters": {
            "requeued_on_resume": got[-1].get("requeued_on_resume") if got else None,
            "restored_buffered": got[-1].get("restored_buffered") if got else None,
        },
    }
    base = None
    if args.baseline:
        baseline_dir = work / "baseline"
        started = time.time()
        baseline_run(config, baseline_dir, len(got), logs)
        report["baseline_wall_s"] = time.time() - started
        base = records(baseline_dir)
        report["heldout"] = compare_heldout(heldout(run), heldout(baseline_dir), args.seed)
    checks = {
        **check_steps_and_slots(got, settings.rollout.prompts_per_step, settings.async_.max_staleness, base),
        **check_episodes(run, got, settings.rollout.group_size),
        **check_checkpoints(run),
        "summary_written": RunDir(run).summary.is_file(),
    }
    report["checks"] = checks
    invariants = ["steps_once_in_order", "slots_once", "episodes_once", "masked_counted", "checkpoints_load"]
    invariants += ["summary_written"] + (["same_tasks_as_baseline"] if base is not None else [])
    report["invariants"] = {name: bool(checks[name]) for name in invariants}
    report["ok"] = all(report["invariants"].values())
    emit_benchmark(report, args.out)
    if not report["ok"]:
        failed = [k for k, v in report["invariants"].items() if not v]
        print(f"chaos: invariants failed: {', '.join(failed)} (workdir {work})", file=sys.stderr)
        raise SystemExit(1)
    return report


if __name__ == "__main__":
    main()
