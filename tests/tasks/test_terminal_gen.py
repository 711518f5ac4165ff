"""Generated terminal task families: determinism, the Harbor directories they write, the
source's index space and held-out split, and the config and CLI errors."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from posttrain.errors import ConfigError, TaskSourceError
from posttrain.tasks.domains import Domain
from posttrain.tasks.harbor import load_harbor_task
from posttrain.tasks.sources import content_key
from posttrain.tasks.terminal_gen import FAMILIES, TerminalGenSource, generate, write_task
from posttrain.tasks.terminal_gen.layout import ROOTS
from posttrain.tasks.terminal_gen.registry import template_ids
from posttrain.tasks.terminal_gen.wording import WORDINGS

CELLS = [(family, difficulty) for family in FAMILIES for difficulty in (1, 2, 3)]


def test_there_are_at_least_ten_families_each_with_a_skill_and_three_levels():
    assert len(FAMILIES) >= 10
    for name, family in FAMILIES.items():
        assert family.name == name and family.skill and len(family.levels) == 3
        ids = family.template_ids()
        assert len(ids) == len(set(ids)) and all(i.startswith(f"{name}/d") for i in ids)


@pytest.mark.parametrize("family, difficulty", CELLS)
def test_every_cell_writes_a_harbor_task_that_loads(tmp_path, family, difficulty):
    task = generate(family, difficulty, seed=5)
    slug = task.template.rsplit("/", 1)[-1]
    assert task.name == f"{family}-d{difficulty}-{slug}-s5" and task.template in template_ids([family], [difficulty])
    assert 1 <= len(task.steps) <= FAMILIES[family].max_steps[difficulty] and all("\n" not in s for s in task.steps)
    assert task.wording in WORDINGS and task.root in ROOTS
    directory = write_task(task, tmp_path)
    assert directory == tmp_path / task.name
    loaded = load_harbor_task(directory, "term")
    assert loaded.kind == "terminal" and loaded.instruction == task.instruction.strip()
    assert loaded.metadata["tags"] == ["generated", family, f"d{difficulty}"]
    assert loaded.metadata["difficulty"] == difficulty and loaded.metadata["family"] == family
    assert loaded.limits.verifier_timeout_s == 30 and loaded.limits.agent_timeout_s == 120
    assert loaded.limits.memory_mb == 1024 and loaded.environment.allow_network is False
    assert json.loads((directory / "solution/steps.json").read_text()) == task.steps
    assert (directory / "solution/solve.sh").read_text() == "#!/bin/bash\nset -e\n" + "".join(
        s + "\n" for s in task.steps
    )
    dockerfile = (directory / "environment/Dockerfile").read_text().splitlines()
    assert dockerfile[:2] == ["FROM debian:bookworm-slim", f"WORKDIR {task.root}"]
    assert f"cd {task.root} " in (directory / "tests/test.sh").read_text()
    for path, content in task.files.items():
        assert (directory / "environment/app" / path).read_text() == content
    compile(task.tests, "test_outputs.py", "exec")


@pytest.mark.parametrize("template", template_ids())
def test_every_template_renders_in_every_wording_and_root(template):
    family, level, slug = template.split("/")
    difficulty = int(level[1:])
    texts = set()
    for i, wording in enumerate(WORDINGS):
        for root in ROOTS:
            task = generate(family, difficulty, seed=40 + i, template=template, wording=wording, root=root)
            assert (task.template, task.wording, task.root) == (template, wording, root)
            assert 1 <= len(task.steps) <= FAMILIES[family].max_steps[difficulty]
            # every absolute path the tests and the solution name lies under the chosen root
            for other in set(ROOTS) - {root}:
                assert other + "/" not in task.tests and not any(other + "/" in s for s in task.steps)
            assert root in task.tests
            texts.add(task.instruction)
            compile(task.tests, "test_outputs.py", "exec")
    assert len(texts) == len(WORDINGS) * len(ROOTS)


def test_wordings_carry_every_part_of_the_instruction():
    import random

    from posttrain.tasks.terminal_gen.instruction_spec import Spec
    from posttrain.tasks.terminal_gen.wording import render

    spec = Spec(goal="copy /app/a.txt to /app/b.txt", inputs=["/app/a.txt holds notes"], output="a copy", notes=["Q1."])
    for wording in WORDINGS:
        text = render(spec, wording, random.Random(0), workdir="/opt/work")
        for part in ("/app/a.txt to /app/b.txt", "/app/a.txt holds notes", "a copy", "Q1.", "/opt/work"):
            assert part in text, (wording, part, text)


def test_same_seed_same_task_other_seeds_differ():
    for family in FAMILIES:
        assert generate(family, 2, 11) == generate(family, 2, 11)
        digests = {generate(family, 2, seed).content_digest() for seed in range(6)}
        assert len(digests) == 6, family


def test_unknown_family_or_difficulty_is_one_clear_error():
    with pytest.raises(TaskSourceError, match=r"unknown family 'nope'; known: files-dirs, .*env-config"):
        generate("nope", 1, 0)
    with pytest.raises(TaskSourceError, match="unknown difficulty 4; choose from 1, 2, 3"):
        generate("git", 4, 0)
    with pytest.raises(TaskSourceError, match="domain 'd': terminal-gen: unknown family 'gti'"):
        TerminalGenSource("d", ["gti"], [1], seed=0, size=5)
    with pytest.raises(TaskSourceError, match=r"unknown template 'git/d1/nope' for git difficulty 1; known: git/d1/"):
        generate("git", 1, 0, template="git/d1/nope")
    with pytest.raises(TaskSourceError, match=r"unknown wording 'poem'; known: terse, verbose"):
        generate("git", 1, 0, wording="poem")
    with pytest.raises(TaskSourceError, match=r"unknown root '/srv'; choose from /app"):
        generate("git", 1, 0, root="/srv")


def test_write_task_replaces_an_older_copy_and_leaves_no_staging(tmp_path):
    first, second = generate("sqlite", 1, 3), generate("sqlite", 1, 3)
    write_task(first, tmp_path)
    (tmp_path / first.name / "stale.txt").write_text("old")
    write_task(second, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [first.name]
    assert not (tmp_path / first.name / "stale.txt").exists()
    (tmp_path / first.name / "kept.txt").write_text("cached")
    write_task(second, tmp_path, replace=False)  # a content-named cache entry stays as it is
    assert (tmp_path / first.name / "kept.txt").exists() and len(list(tmp_path.iterdir())) == 1


def test_the_source_spreads_cells_and_materializes_once(tmp_path):
    source = TerminalGenSource("term", ["git", "sqlite", "archives"], [1, 3], seed=7, size=12, cache_dir=tmp_path)
    assert len(source) == 12
    assert [source.cell(i) for i in range(7)] == [
        ("git", 1), ("sqlite", 1), ("archives", 1), ("git", 3), ("sqlite", 3), ("archives", 3), ("git", 1),
    ]  # fmt: skip
    task = source.get(4)
    assert (task.metadata["family"], task.metadata["difficulty"]) == source.cell(4)
    assert task.metadata["reference_steps"] == source.generated(4).steps and task.domain == "term"
    directory = Path(task.metadata["task_dir"])
    assert directory.is_relative_to(tmp_path)
    mtime = (directory / "task.toml").stat().st_mtime_ns
    again = source.get(4)
    assert again == task and (directory / "task.toml").stat().st_mtime_ns == mtime  # reused, not rewritten
    other_seed = TerminalGenSource("term", ["git", "sqlite", "archives"], [1, 3], seed=8, size=12, cache_dir=tmp_path)
    assert content_key(other_seed.get(4)) != content_key(task)
    with pytest.raises(IndexError):
        source.get(12)


def test_content_key_tells_data_apart_behind_the_same_instruction(tmp_path):
    source = TerminalGenSource("term", ["permissions-find"], [3], seed=0, size=60, cache_dir=tmp_path)
    by_text: dict[str, int] = {}
    for i in range(60):
        text = source.generated(i).instruction
        if text in by_text:  # this level's text names no generated value: some instances share it
            a, b = source.get(by_text[text]), source.get(i)
            break
        by_text[text] = i
    assert a.instruction == b.instruction
    assert content_key(a) != content_key(b)
    assert content_key(a) == content_key(a.model_copy(update={"id": "elsewhere"}))


def test_heldout_and_training_are_disjoint_by_content(tmp_path):
    source = TerminalGenSource("term", list(FAMILIES), [1, 2, 3], seed=1, size=60, cache_dir=tmp_path)
    domain = Domain("term", source, weight=1.0, heldout_size=20, seed=1)
    assert [t.metadata["index"] for t in domain.heldout] == list(range(20))  # procedural: the first items
    heldout = {content_key(t) for t in domain.heldout}
    cursor = 0
    for _ in range(15):
        task, cursor = domain.training_task(cursor)
        assert content_key(task) not in heldout


def test_config_accepts_terminal_gen_and_names_bad_keys(tmp_path):
    from posttrain.config import parse_config
    from posttrain.pipeline.build import build_source

    def domain(**keys):
        return parse_config({"domains": [{"name": "t", **keys}]}).domains[0]

    cfg = domain(source="terminal-gen:git,sqlite", kind="terminal", difficulty=2, size=30, seed=4)
    assert cfg.difficulties() == [2]
    source = build_source(cfg, tmp_path)
    assert isinstance(source, TerminalGenSource)
    assert (source.families, source.difficulties, len(source), source.seed) == (["git", "sqlite"], [2], 30, 4)
    assert build_source(domain(source="terminal-gen:all", kind="terminal"), tmp_path).difficulties == [1, 2, 3]
    assert len(build_source(domain(source="terminal-gen:all", kind="terminal"), tmp_path).families) == len(FAMILIES)
    cases = [
        (
            dict(source="terminal-gen:git", kind="terminal", difficulty=[1, 4]),
            "domains[0].difficulty: unknown difficulty 4",
        ),
        (dict(source="terminal-gen:git"), 'terminal-gen: source holds terminal tasks: set kind = "terminal"'),
        (
            dict(source="reasoning-gym:basic_arithmetic", difficulty=1),
            "difficulty applies only to a terminal-gen: source",
        ),
        (dict(source="terminal-gen:", kind="terminal"), "names no family"),
    ]
    for keys, message in cases:
        with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
            domain(**keys)
    with pytest.raises(TaskSourceError, match="domain 't': terminal-gen: unknown family 'nope'"):
        build_source(domain(source="terminal-gen:git,nope", kind="terminal"), tmp_path)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "tasks", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_cli_generates_spread_tasks_and_lists_families(tmp_path):
    result = run_cli(
        "generate", "git,sqlite", "--count", "4", "--seed", "3", "--difficulty", "1,3", "--out", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    names = json.loads(result.stdout)["tasks"]
    source = TerminalGenSource("x", ["git", "sqlite"], [1, 3], seed=3, size=4)
    assert names == [source.generated(i).name for i in range(4)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    levels = [tomllib.loads((tmp_path / n / "task.toml").read_text())["metadata"]["difficulty"] for n in names]
    assert levels == [1, 1, 3, 3]
    pinned = run_cli(
        "generate", "git", "--count", "3", "--templates", "git/d1/tag-release", "--out", str(tmp_path / "t")
    )
    assert pinned.returncode == 0, pinned.stderr
    assert all("-d1-tag-release-" in name for name in json.loads(pinned.stdout)["tasks"])
    listing = run_cli("families")
    assert listing.returncode == 0 and all(name in listing.stdout for name in FAMILIES)
    assert "--difficulty" in run_cli("generate", "--help").stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["generate", "nope", "--out", "x"], "unknown family 'nope'; known: files-dirs"),
        (["generate", "git", "--difficulty", "4", "--out", "x"], "unknown difficulty 4; choose from 1, 2, 3"),
        (["generate", "git", "--difficulty", "one", "--out", "x"], "--difficulty: 'one' is not a list of integers"),
        (
            ["generate", "git", "--templates", "git/d1/nope", "--out", "x"],
            "--templates: unknown template 'git/d1/nope'",
        ),
        (
            ["generate", "git", "--difficulty", "2", "--templates", "git/d1/tag-release", "--out", "x"],
            "no template of its families and difficulties",
        ),
    ],
)
def test_cli_errors_are_one_line(tmp_path, args, message):
    result = run_cli(*[str(tmp_path / a) if a == "x" else a for a in args])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_a_composite_looks_first_checks_last_and_tests_every_part():
    task = generate("composite", 2, seed=3, template="composite/d2/yaml-then-diff", root="/opt/work")
    assert task.steps[0] == "ls -R /opt/work" and task.steps[-1] == "ls -lR /opt/work" and len(task.steps) >= 4
    assert "/app/version.txt" not in task.tests and "/opt/work/version.txt" in task.tests
    assert "def test_part1_" in task.tests and "def test_part2_" in task.tests
    assert task.tests.count("def digest(") == 1  # one shared header
    compile(task.tests, "test_outputs.py", "exec")
    assert "check your result before you finish" in task.instruction
