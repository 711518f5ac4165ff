"""Where a verifier's result could come from something other than the state it checks, and
so how many repeats a task needs before its verifier may be called deterministic.

Repeats are most of an inspection's cost (each is a full run of the task's tests), and a
verifier only varies when something in the run varies: a random number, the clock, the
process id, the order of a hash set, a race between processes, a time limit. Two runs each of
the reference solution and of doing nothing are always made; the rest of `--repeats` is spent
on a task when
    its tests, its solution, or an environment file they name use such a source (read from the
    files: `sources`), or
    the first runs disagree in anything but their reward: their output, once durations and
    addresses are blanked, or their running time (`runs_differ`).
A verifier whose reward varies is flaky already, and needs no more runs to say so.
"""

from __future__ import annotations

import re
from pathlib import Path

from posttrain.tasks.records import Task

_SOURCES: dict[str, re.Pattern] = {
    "randomness": re.compile(
        r"\bS?RANDOM\b|\bshuf\b|\bsort\s+(?:-\w*R|--random-sort)|/dev/u?random|/proc/sys/kernel/random/|\bmktemp\b[^\n]*\|\s*(?:md5|sha)|"
        r"\bimport\s+(?:random|secrets|uuid)\b|\bfrom\s+(?:random|secrets|uuid)\s+import\b|\brandom\.\w+\(|"
        r"\buuid\d?\(|\bos\.urandom\b|\bsrand\b|\brand\(|\bMath\.random\b|\bcrypto\.random|\brandint\b|"
        r"\bmath/rand\b|\bRandom\(",
        re.M,
    ),
    "clock": re.compile(
        r"\$\(\s*date\b|`date\b|\bdate\s+[+-]|\btime\.(?:time|time_ns|localtime|gmtime|strftime|ctime|monotonic|"
        r"perf_counter)\(|\bdatetime\b|\bdate\.today\(|\bDate\.now\(|\bnew Date\(|\btime\(NULL\)|\bgettimeofday\b|"
        r"\bclock_gettime\b|\bclock\(\)|\btime\.Now\(|\$EPOCH(?:REAL)?SECONDS\b|\$SECONDS\b|/proc/(?:uptime|loadavg|stat)\b",
        re.M,
    ),
    "process ids": re.compile(r"\$\$|\$BASHPID\b|\bos\.getpid\(|\bgetpid\(", re.M),
    "hash order": re.compile(
        r"\bnext\(iter\(\{|\biter\(\{|\blist\(\{[^}:]*\}\)|\blist\((?:set|frozenset)\(|"
        r"\bfor\s+\w+\s+in\s+(?:set|frozenset)\(|\bfor\s+\w+\s+in\s+\{[^}:.]*\}|PYTHONHASHSEED",
        re.M,
    ),
    "concurrency and timing": re.compile(
        r"\bsleep\b|\bwait\b\s*(?:$|;|&&|\|\||\$!|%)|(?<![&>|])&\s*(?:#.*)?$|\bxargs\b[^\n]*\s-P|"
        r"\bmake\b[^\n]*\s-j|\"-j\d*\"|\bimport\s+(?:threading|multiprocessing|asyncio)\b|\bconcurrent\.futures\b|"
        r"\bThread\(|\bpthread_create\b|\btimeout\s*=\s*0?\.\d|\btimeout\s+(?:-[sk]\s+\w+\s+|-[-\w=]+\s+)*(?:[0-4](?:\.\d+)?|0?\.\d+)s?\s|\bgo\s+func\b|\bPromise\.(?:race|all)\b",
        re.M,
    ),
}
_TEXT_LIMIT = 500_000
# blanked before outputs are compared: durations, memory addresses, temporary names
_VOLATILE = re.compile(r"\d+\.\d+|0x[0-9a-fA-F]+|\btmp[.\w]*|\bpytest-\d+")


def _text(path: Path) -> str:
    try:
        if path.stat().st_size > _TEXT_LIMIT:
            return ""
        data = path.read_bytes()
    except OSError:
        return ""
    return "" if b"\0" in data[:4096] else data.decode(errors="replace")


def _files(directory: str | Path | None) -> list[Path]:
    if not directory or not Path(directory).is_dir():
        return []
    return sorted(f for f in Path(directory).rglob("*") if f.is_file())


def sources(task: Task) -> list[str]:
    """Sources of nondeterminism the task's tests and solution use, as `kind: file: text`; an
    environment file counts when the tests or solution name it (a generator the Dockerfile
    runs once, at build time, does not vary between trials)."""
    tests_dir = task.metadata.get("tests_dir")
    checked = {f"tests/{f.relative_to(tests_dir)}": _text(f) for f in _files(tests_dir)}
    if task.solution:
        checked.update({f"solution/{f.relative_to(task.solution)}": _text(f) for f in _files(task.solution)})
    env_dir = task.environment.dockerfile_dir if task.environment else None
    named = "\n".join(checked.values())
    for file in _files(env_dir):
        if file.name != "Dockerfile" and re.search(rf"(?<![\w.-]){re.escape(file.name)}(?![\w-])", named):
            checked[f"environment/{file.relative_to(env_dir)}"] = _text(file)
    found = []
    for label, text in checked.items():
        for kind, pattern in _SOURCES.items():
            match = pattern.search(text)
            if match:
                found.append(f"{kind}: {label}: {match.group(0).strip()[:40]!r}")
    return found


def _shape(trial) -> str:
    parts = [s.output_tail for s in trial.steps]
    parts += [str(trial.verifier.get(k, "")) for k in ("stdout_tail", "stderr_tail", "exit_code")]
    return _VOLATILE.sub("#", "\n".join(parts))


def runs_differ(trials: list, slow_ratio: float = 3.0, slow_floor_s: float = 1.0) -> str | None:
    """Why runs of one state differ in more than their reward (their output, or a running time
    that spreads past `slow_ratio` and `slow_floor_s`), or None when they look alike."""
    shapes = {_shape(t) for t in trials if not t.error}
    if len(shapes) > 1:
        return "their outputs differ"
    times = [float(t.verifier.get("duration_s", 0.0)) for t in trials if not t.error]
    if len(times) > 1 and max(times) > slow_floor_s and max(times) > slow_ratio * max(min(times), 1e-3):
        return f"their verifier times spread from {min(times):.2f} s to {max(times):.2f} s"
    return None
