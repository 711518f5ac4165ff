from pathlib import Path

import pytest

from posttrain.tasks.harbor import HarborTaskError, load_harbor_suite, load_harbor_task

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "terminal"


def make_task(root: Path, toml: str = "", instruction: str = "Do the thing.", with_tests: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "task.toml").write_text(toml or 'version = "1.0"\n[metadata]\ndifficulty = "easy"\ncategory = "demo"\n')
    if instruction is not None:
        (root / "instruction.md").write_text(instruction)
    (root / "environment").mkdir()
    (root / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    if with_tests:
        (root / "tests").mkdir()
        (root / "tests" / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
    return root


def test_a_task_directory_becomes_a_terminal_task(tmp_path):
    toml = """version = "1.0"
[metadata]
category = "files"
tags = ["a", "b"]
[verifier]
timeout_sec = 30.0
env = { TOKEN = "x" }
[agent]
timeout_sec = 90.0
[environment]
cpus = 2
memory = "2G"
storage_mb = 512
allow_internet = false
gpus = 0
"""
    task = load_harbor_task(make_task(tmp_path / "demo", toml))
    assert task.id == "demo" and task.kind == "terminal" and task.domain == "files"
    assert task.instruction == "Do the thing."
    assert task.limits.agent_timeout_s == 90 and task.limits.verifier_timeout_s == 30
    assert task.limits.cpus == 2 and task.limits.memory_mb == 2048
    assert task.environment.allow_network is False and task.environment.dockerfile_dir.endswith("demo/environment")
    assert task.metadata["verifier_env"] == {"TOKEN": "x"} and task.metadata["storage_mb"] == 512
    assert "unknown_keys" not in task.metadata  # gpus = 0 is Harbor's own key
    assert task.solution is None  # no solution/solve.sh
    typo = load_harbor_task(make_task(tmp_path / "typo", toml.replace("storage_mb", "storgae_mb")))
    assert typo.metadata["unknown_keys"] == ["environment.storgae_mb (did you mean storage_mb?)"]
    with pytest.raises(HarborTaskError, match="environment.gpus: the task needs 1 GPU"):
        load_harbor_task(make_task(tmp_path / "gpu", toml.replace("gpus = 0", "gpus = 1")))


@pytest.mark.parametrize(
    "breakage, where",
    [
        (lambda root: (root / "instruction.md").unlink(), "instruction.md: missing"),
        (lambda root: (root / "tests" / "test.sh").unlink(), "tests/test.sh: missing"),
        (lambda root: (root / "task.toml").write_text("version = \n"), "task.toml: not valid TOML"),
        (
            lambda root: (root / "task.toml").write_text('[verifier]\ntimeout_sec = "soon"\n'),
            "task.toml: verifier.timeout_sec:",
        ),
        (
            lambda root: (root / "task.toml").write_text('[environment]\nmemory = "lots"\n'),
            "task.toml: environment.memory_mb:",
        ),
        (lambda root: (root / "instruction.md").write_text("  \n"), "instruction.md: empty"),
    ],
)
def test_a_broken_task_names_the_file_and_field(tmp_path, breakage, where):
    root = make_task(tmp_path / "broken")
    breakage(root)
    with pytest.raises(HarborTaskError, match=where.replace(".", r"\.")):
        load_harbor_task(root)


def test_the_builtin_suite_loads_and_filters():
    tasks = load_harbor_suite(SUITE)
    assert len(tasks) >= 40
    categories = {t.metadata["category"] for t in tasks}
    assert len(categories) >= 6
    assert all(t.solution and Path(t.solution, "solve.sh").is_file() for t in tasks)
    easy = load_harbor_suite(SUITE, tags=["rl-easy"])
    assert easy and all("rl-easy" in t.metadata["tags"] for t in easy)
    assert [t.id for t in load_harbor_suite(SUITE, names=["hello-file"])] == ["hello-file"]
    with pytest.raises(HarborTaskError, match="no task named nope"):
        load_harbor_suite(SUITE, names=["nope"])
