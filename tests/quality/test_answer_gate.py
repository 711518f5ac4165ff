"""The quality gate on answer domains: bad items quarantined with their reason, hackable
verifiers dropped with the probe that got through, clean generators kept, the no-signal check
with a real (tiny, untrained) model, and the gate in front of a training run."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from posttrain.config import DomainConfig, load_config
from posttrain.errors import PosttrainError
from posttrain.pipeline.build import build_mixture
from posttrain.quality.answer_gate import build_answer_domains, inspect_answer_domains

ROWS = [
    {"id": "ok1", "prompt": "2+2?", "answer": "4"},
    {"id": "wrong_reference", "prompt": "3+3?", "answer": "six"},  # numeric cannot read its own reference
    {"id": "dup_a", "prompt": "5+5?", "answer": "10"},
    {"id": "dup_b", "prompt": "5+5?", "answer": "10"},
    {"id": "conflict_a", "prompt": "6+6?", "answer": "12"},
    {"id": "conflict_b", "prompt": "6+6?", "answer": "13"},
    *({"id": f"ok{n}", "prompt": f"{n}+{n}?", "answer": str(2 * n)} for n in range(7, 15)),
]

HONEST = """
def exact(task, completion):
    return 1.0 if completion.strip() == str(task["answer"]).strip() else 0.0
"""
HACKABLE = """
def anything(task, completion):
    return 1.0
"""
NONEMPTY = """
def nonempty(task, completion):
    return 1.0 if completion.strip() else 0.0
"""


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("\n".join(json.dumps({**r, "verifier": r.get("verifier", "numeric")}) for r in rows) + "\n")
    return path


def inspect(configs, base_dir, out=None, **kw):
    return inspect_answer_domains(build_answer_domains(configs, base_dir), out, **kw)


def by_id(reports):
    return {r.id: r for r in reports}


def test_jsonl_wrong_reference_duplicate_conflict_and_heldout_overlap(tmp_path):
    path = write_jsonl(tmp_path / "arith.jsonl", ROWS)
    report, [domain] = inspect([DomainConfig(name="arith", source=str(path), heldout=4)], tmp_path, tmp_path / "out")
    items = {item.id: item for item in domain.items}
    assert domain.verdict == "ok" and domain.items_checked == len(ROWS)
    assert items["arith/wrong_reference"].verdict == "unsolvable"
    assert "reference" in items["arith/wrong_reference"].reason
    # one copy of the duplicate stays; both items of the conflicting prompt go
    assert sum(f"arith/dup_{s}" in items for s in "ab") == 1
    assert {items[f"arith/conflict_{s}"].verdict for s in "ab"} == {"invalid"}
    assert all("conflicting" in items[f"arith/conflict_{s}"].reason for s in "ab")
    assert set(items) == {"arith/wrong_reference", "arith/conflict_a", "arith/conflict_b"} | {
        i for i in items if i.startswith("arith/dup_")
    }
    quarantine = (tmp_path / "out" / "quarantine.txt").read_text()
    assert "arith/wrong_reference\tunsolvable: reference:" in quarantine
    assert report["summary"]["items_quarantined"] == 4 and report["summary"]["domains"]["dropped"] == 0


def test_training_item_with_a_held_out_prompt_is_an_overlap(tmp_path):
    # the same prompt with another answer: the domain's split keeps one copy on each side
    rows = [{"id": f"q{n}", "prompt": f"{n}*3?", "answer": str(3 * n)} for n in range(12)]
    rows += [{"id": f"leak{n}", "prompt": f"{n}*3?", "answer": f"{3 * n}.0"} for n in range(12)]
    path = write_jsonl(tmp_path / "leaky.jsonl", rows)
    _, [domain] = inspect([DomainConfig(name="leaky", source=str(path), heldout=6)], tmp_path)
    overlaps = [i for i in domain.items if "heldout_overlap" in i.reason]
    assert overlaps and all(i.verdict == "invalid" for i in overlaps)


def test_python_reward_that_accepts_anything_is_dropped_as_exploitable(tmp_path):
    for name, code in (("honest", HONEST), ("hackable", HACKABLE), ("nonempty", NONEMPTY)):
        (tmp_path / f"{name}_reward.py").write_text(code)
    path = write_jsonl(tmp_path / "clean.jsonl", [r for r in ROWS if r["id"].startswith("ok")])
    configs = [
        DomainConfig(name=n, source=str(path), heldout=2, verifier=f"python:{n}_reward:{f}")
        for n, f in (("honest", "exact"), ("hackable", "anything"), ("nonempty", "nonempty"))
    ]
    _, reports = inspect(configs, tmp_path)
    reports = by_id(reports)
    assert reports["honest"].verdict == "ok" and not reports["honest"].items
    hackable = reports["hackable"]
    assert hackable.dropped and hackable.verdict == "exploitable"
    failed = {c.name for c in hackable.checks if c.status == "fail"}
    assert {"probe:empty", "probe:constant:0", "probe:garbage:random_text", "probe:garbage:echo_prompt"} <= failed
    nonempty = reports["nonempty"]
    failed = {c.name for c in nonempty.checks if c.status == "fail"}
    assert nonempty.verdict == "exploitable" and "probe:empty" not in failed and "probe:constant:yes" in failed


@pytest.mark.parametrize("generator", ["arc_agi", "rearc", "basic_arithmetic", "leg_counting", "spell_backward"])
def test_reasoning_gym_generators_pass_cleanly(tmp_path, generator):
    cfg = DomainConfig(name=generator, source=f"reasoning-gym:{generator}", heldout=8, size=200)
    _, [domain] = inspect([cfg], tmp_path)
    assert domain.verdict == "ok", domain.reason
    assert not domain.items, [(i.id, i.reason) for i in domain.items[:3]]
    assert all(c.status == "pass" for c in domain.checks), [c.summary for c in domain.checks if c.status != "pass"]


def test_a_source_that_does_not_build_is_dropped_as_invalid(tmp_path):
    _, [domain] = inspect([DomainConfig(name="gone", source=str(tmp_path / "missing.jsonl"))], tmp_path)
    assert domain.dropped and domain.verdict == "invalid" and "does not exist" in domain.reason


def test_no_signal_with_a_tiny_untrained_model(tmp_path):
    cfg = DomainConfig(name="arith", source="reasoning-gym:basic_arithmetic", heldout=4, size=50)
    report, [domain] = inspect([cfg], tmp_path, policy="tiny-llama", samples=2, probe_set=3, reply_tokens=8)
    signal = next(c for c in domain.checks if c.name == "signal")
    assert signal.status == "fail" and signal.evidence == {"passed": 0, "samples": 6}
    assert domain.verdict == "no_signal" and domain.pass_rate == 0.0 and domain.dropped
    assert report["summary"]["domains"]["verdicts"] == {"no_signal": 1}


def write_config(tmp_path: Path, domains: str) -> Path:
    """A run config with quality_gate on: `domains`, then a domain whose reward takes anything."""
    (tmp_path / "hackable_reward.py").write_text(HACKABLE)
    write_jsonl(tmp_path / "arith.jsonl", ROWS)
    hackable = """
        [[domains]]
        name = "hackable"
        source = "arith.jsonl"
        heldout = 2
        verifier = "python:hackable_reward:anything"
        """
    path = tmp_path / "run.toml"
    head = 'quality_gate = true\n[model]\nname = "tiny-llama"\n'
    path.write_text(head + textwrap.dedent(domains) + textwrap.dedent(hackable))
    return path


def test_quality_gate_in_a_run_drops_bad_domains_and_items(tmp_path):
    config_path = write_config(
        tmp_path,
        """
        [[domains]]
        name = "arith"
        source = "arith.jsonl"
        heldout = 2
        """,
    )
    config, lines = load_config(config_path), []
    mixture = build_mixture(config, tmp_path, quality_dir=tmp_path / "quality", log=lines.append)
    assert list(mixture.domains) == ["arith"]
    assert any(line.startswith("quality gate: domain 'hackable' dropped (exploitable)") for line in lines)
    assert any(line.startswith("quality gate: arith/wrong_reference left out (unsolvable)") for line in lines)
    drawn = {mixture.domains["arith"].training_task(c)[0].id for c in range(40)}
    drawn |= {t.id for t in mixture.domains["arith"].heldout}
    assert "arith/wrong_reference" not in drawn and "arith/conflict_a" not in drawn and "arith/ok7" in drawn
    assert (tmp_path / "quality" / "answers" / "report.json").is_file()
    with pytest.raises(PosttrainError, match="--strict"):
        build_mixture(config, tmp_path, quality_dir=tmp_path / "q2", log=lines.append, strict=True)


def test_quality_gate_that_empties_the_domain_list_is_an_error(tmp_path):
    config_path = write_config(tmp_path, "")
    with pytest.raises(PosttrainError, match="dropped every domain"):
        build_mixture(load_config(config_path), tmp_path, quality_dir=tmp_path / "q", log=lambda _: None)


def test_cli_inspects_a_jsonl_source_and_a_generator(tmp_path):
    path = write_jsonl(tmp_path / "arith.jsonl", ROWS)
    command = [sys.executable, "-m", "posttrain.cli", "inspect"]
    result = subprocess.run(
        [*command, path, "--out", tmp_path / "out", "--heldout", "4"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 1, result.stderr[-2000:]  # items were quarantined
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["items_quarantined"] == 4 and summary["domains"]["kept"] == 1
    assert "arith: ok, 4 of 14 items quarantined" in result.stdout + result.stderr
    assert "arith/wrong_reference" in (tmp_path / "out" / "report.md").read_text()
    result = subprocess.run(
        [*command, "reasoning-gym:arc_agi", "--out", tmp_path / "rg", "--items", "30"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


HANGS = """
import time

def hangs_on_long(task, completion):
    if len(completion) > 1000:
        time.sleep(60)
    return 1.0 if completion.strip() == str(task["answer"]).strip() else 0.0
"""


def test_verifier_that_hangs_on_a_garbage_answer_is_a_broken_verifier(tmp_path):
    from posttrain.quality.answer_inspection import AnswerInspectOptions, inspect_answer_domain
    from posttrain.quality.scoring_worker import Scorer

    (tmp_path / "hangs_reward.py").write_text(HANGS)
    path = write_jsonl(tmp_path / "clean.jsonl", [r for r in ROWS if r["id"].startswith("ok")])
    cfg = DomainConfig(
        name="hangs", source=str(path), heldout=2, verifier="python:hangs_reward:hangs_on_long", reward_timeout_s=60
    )
    [(cfg, source)] = build_answer_domains([cfg], tmp_path)
    with Scorer(timeout_s=2) as scorer:
        domain = inspect_answer_domain("hangs", cfg.source, source, 2, 0, AnswerInspectOptions(probe_items=2), scorer)
        assert scorer(str(source.get(0).answer), source.get(0)).passed  # a fresh worker after the hang
    long = next(c for c in domain.checks if c.name == "probe:garbage:long_string")
    assert long.status == "fail" and long.verdict == "broken_verifier" and "timed out" in long.summary
    assert domain.verdict == "broken_verifier" and domain.dropped


@pytest.mark.timeout(600)
def test_posttrain_train_with_quality_gate_trains_on_the_kept_domains(tmp_path):
    config = write_config(
        tmp_path,
        """
        [rollout]
        prompts_per_step = 3
        group_size = 2
        max_new_tokens = 4
        [train]
        steps = 1
        checkpoint_every = 1
        keep_checkpoints = 1
        [[domains]]
        name = "arith"
        source = "arith.jsonl"
        heldout = 2
        """,
    )
    train = [sys.executable, "-m", "posttrain.cli", "train", config, "--out"]
    result = subprocess.run([*train, tmp_path / "run"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    assert "quality gate: domain 'hackable' dropped (exploitable)" in output
    assert "quality gate: arith/wrong_reference left out (unsolvable)" in output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert set(summary["per_domain_delta"]) == {"arith"}
    result = subprocess.run([*train, tmp_path / "strict", "--strict"], capture_output=True, text=True, timeout=600)
    assert result.returncode != 0 and "(--strict)" in result.stdout + result.stderr
    assert not (tmp_path / "strict" / "summary.json").exists()


def test_parquet_table_in_verl_layout(tmp_path):
    import pyarrow
    import pyarrow.parquet

    rows = [
        {"prompt": [{"role": "user", "content": p}], "reward_model": {"ground_truth": a}, "data_source": "arith"}
        for p, a in [("1+1?", "2"), ("2+2?", "4"), ("2+2?", "5"), ("4+4?", "8"), ("5+5?", "10"), ("6+6?", "12")]
    ]
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), tmp_path / "train.parquet")
    cfg = DomainConfig(name="verl", source="parquet:train.parquet", heldout=1, verifier="numeric")
    _, [domain] = inspect([cfg], tmp_path)
    assert domain.verdict == "ok" and {i.id for i in domain.items} == {"verl/1", "verl/2"}
    assert all("conflicting" in i.reason for i in domain.items)
