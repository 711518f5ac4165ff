"""How many repeats a task gets: all of --repeats where its files use a source of
nondeterminism or its first runs differ in more than their reward, --min-repeats otherwise."""

from pathlib import Path

import pytest

from posttrain.quality.inspector import InspectOptions, inspect_dirs
from posttrain.quality.nondeterminism import runs_differ, sources
from posttrain.quality.trial import Step, Trial
from posttrain.tasks.harbor import load_harbor_task
from tests.sandbox.conftest import BWRAP_MISSING

SOUND_TEST = (
    "mkdir -p /logs/verifier\n"
    'if [ "$(cat /app/out.txt 2>/dev/null)" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n'
)


def make_task(
    root: Path,
    test_sh: str = SOUND_TEST,
    solve_sh: str = "echo 42 > /app/out.txt\n",
    env_files: dict[str, str] | None = None,
    dockerfile_extra: str = "",
) -> Path:
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text(f"FROM debian:bookworm-slim\nWORKDIR /app\n{dockerfile_extra}")
    for name, text in (env_files or {}).items():
        (root / "environment" / name).write_text(text)
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(test_sh)
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text(solve_sh)
    (root / "task.toml").write_text(
        'version = "1.0"\n[verifier]\ntimeout_sec = 30.0\n[agent]\ntimeout_sec = 30.0\n'
        "[environment]\nallow_internet = false\n"
    )
    (root / "instruction.md").write_text("Write 42 into /app/out.txt.")
    return root


@pytest.mark.parametrize(
    "line, kind",
    [
        ("x=$((RANDOM % 2))", "randomness"),
        ('python3 -c "import random; print(random.random())"', "randomness"),
        ("now=$(date +%s)", "clock"),
        ('python3 -c "import time; print(time.time())"', "clock"),
        ("echo $$ > /tmp/pid", "process ids"),
        ("python3 -c \"print(next(iter({'a', 'b'})))\"", "hash order"),
        ("./server & sleep 1", "concurrency and timing"),
        ("make -j8 all", "concurrency and timing"),
        ("timeout -s KILL 1.5 ./solver", "concurrency and timing"),
    ],
)
def test_sources_in_the_tests_are_found(tmp_path, line, kind):
    task = load_harbor_task(make_task(tmp_path / "t", test_sh=SOUND_TEST + line + "\n"))
    assert any(found.startswith(f"{kind}: tests/test.sh") for found in sources(task)), sources(task)


def test_a_sound_task_and_a_build_time_generator_have_no_source(tmp_path):
    """gen.py runs once, when the environment builds: every trial shares its output."""
    generator = {"gen.py": "import random\nprint(random.randint(1, 9))\n"}
    quiet = make_task(tmp_path / "quiet", env_files=generator, dockerfile_extra="COPY gen.py /opt/gen.py\n")
    assert sources(load_harbor_task(quiet)) == []
    named = make_task(
        tmp_path / "named",
        test_sh=SOUND_TEST + "python3 /opt/gen.py\n",
        env_files=generator,
        dockerfile_extra="COPY gen.py /opt/gen.py\n",
    )
    assert [s.split(":")[0:2] for s in sources(load_harbor_task(named))] == [["randomness", " environment/gen.py"]]
    solved_randomly = make_task(tmp_path / "solved", solve_sh="shuf -n1 -e 42 > /app/out.txt\n")
    assert sources(load_harbor_task(solved_randomly))[0].startswith("randomness: solution/solve.sh")


def _run(stdout: str, duration_s: float = 0.3, step_output: str = "") -> Trial:
    return Trial(
        "x",
        [Step("solve", 0, 0.1, output_tail=step_output)],
        1.0,
        True,
        {"stdout_tail": stdout, "stderr_tail": "", "exit_code": 0, "duration_s": duration_s},
    )


def test_runs_differ_in_output_but_not_in_durations_or_addresses():
    assert runs_differ([_run("3 passed in 0.12s at 0x7f01"), _run("3 passed in 0.31s at 0x7f9c")]) is None
    assert runs_differ([_run("missing {'b', 'a'}"), _run("missing {'a', 'b'}")]) == "their outputs differ"
    assert (
        runs_differ(
            [_run("ok", step_output="made 4")],
        )
        is None
    )
    assert runs_differ([_run("ok", step_output="made 4"), _run("ok", step_output="made 5")]) == "their outputs differ"
    assert runs_differ([_run("ok", 0.4), _run("ok", 0.9)]) is None  # under the 1 s floor
    assert "times spread" in runs_differ([_run("ok", 0.5), _run("ok", 2.5)])


@pytest.mark.skipif(bool(BWRAP_MISSING), reason=BWRAP_MISSING or "")
def test_the_inspector_gives_all_repeats_only_where_a_run_can_vary(tmp_path):
    steady = make_task(tmp_path / "steady")
    marked = make_task(tmp_path / "marked", test_sh=SOUND_TEST + "echo checked at $(date +%s)\n")
    # an object's address (address-space randomisation) differs from run to run, and no pattern
    # names it: the first runs' outputs tell
    unlisted = make_task(tmp_path / "unlisted", test_sh=SOUND_TEST + 'python3 -c "print(id(object()))"\n')
    reports = {
        r.id: r
        for r in inspect_dirs(
            [steady, marked, unlisted], InspectOptions(repeats=3, min_repeats=2, probes=(), use_cache=False)
        )
    }
    runs = {}
    for name, report in reports.items():
        assert report.verdict == "ok", (name, report.reason)
        check = next(c for c in report.checks if c.name == "deterministic")
        runs[name] = (
            len(check.evidence["rewards"]["oracle"]),
            len(check.evidence["rewards"]["nop"]),
            check.evidence["repeats"],
        )
    assert runs["steady"][:2] == (2, 2) and "no source of nondeterminism" in runs["steady"][2]
    assert runs["marked"][:2] == (3, 3) and "clock: tests/test.sh" in runs["marked"][2]
    assert runs["unlisted"][:2] == (3, 3) and "outputs differ" in runs["unlisted"][2]
