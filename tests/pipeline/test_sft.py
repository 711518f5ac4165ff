"""The supervised warm start: demonstrations in the agent's token format, verified in real
sandboxes; the SFT stage trains on them, writes a Hugging Face model, and resumes after a kill
on the same batches; bad input fails with one line naming what is wrong."""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from safetensors.torch import load_file

from posttrain.agent.loop import AgentConfig, system_prompt
from posttrain.agent.policies import reference_steps
from posttrain.agent.tool_calls import parse_tool_calls
from posttrain.errors import PosttrainError, TaskSourceError
from posttrain.pipeline.sft.demonstrations import DemonstrationFailed, collect_demonstrations
from posttrain.pipeline.sft.stage import plan_batches
from posttrain.pipeline.sft.transcripts import read_transcripts
from posttrain.tasks.harbor import load_harbor_suite

CLI = [sys.executable, "-m", "posttrain.cli"]
COUNT_LINES_TEST_SH = Path(__file__).parents[2] / "tasks" / "terminal" / "count-lines" / "tests" / "test.sh"


def write_word_task(root: Path, index: int, steps: list[str] | None = None) -> Path:
    """A one-step Harbor task: write a given word to /app/out-N.txt."""
    word = f"word{index}"
    task = root / f"write-{index}"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "task.toml").write_text(
        'version = "1.0"\n[metadata]\ntags = ["sft-test"]\n[verifier]\ntimeout_sec = 30.0\n'
        "[agent]\ntimeout_sec = 60.0\n[environment]\nallow_internet = false\n"
    )
    (task / "instruction.md").write_text(f"Write the word {word} followed by a newline to /app/out-{index}.txt.")
    (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    shutil.copy(COUNT_LINES_TEST_SH, task / "tests" / "test.sh")
    check = f"assert Path('/app/out-{index}.txt').read_text() == '{word}\\n'"
    (task / "tests" / "test_outputs.py").write_text(f"from pathlib import Path\n\ndef test_word():\n    {check}\n")
    steps = steps if steps is not None else [f"echo {word} > /app/out-{index}.txt"]
    (task / "solution" / "steps.json").write_text(json.dumps(steps))
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\nset -e\n" + "\n".join(steps) + "\n")
    return task


@pytest.fixture
def word_suite(tmp_path):
    root = tmp_path / "suite"
    for index in range(12):
        write_word_task(root, index)
    return root


def test_demonstrations_are_verified_agent_transcripts(word_suite, tokenizer):
    tasks = load_harbor_suite(word_suite, domain="words")[:3]
    agent = AgentConfig(tools=["bash", "finish"], max_steps=4)
    transcripts = collect_demonstrations(tasks, tokenizer, agent)
    assert [t.task_id for t in transcripts] == [t.id for t in tasks]
    for task, transcript in zip(tasks, transcripts):
        (segment,) = transcript.segments  # an unpruned episode is one sequence
        prompt = tokenizer.decode(segment["prompt_ids"])
        assert system_prompt(["bash", "finish"]) in prompt and task.instruction in prompt
        assert "read_file" not in prompt  # only the offered tools are described
        mask, ids = segment["completion_mask"], segment["completion_ids"]
        own = tokenizer.decode([t for t, m in zip(ids, mask) if m])
        observation = tokenizer.decode([t for t, m in zip(ids, mask) if not m])
        calls = parse_tool_calls(own)
        assert [c.name for c in calls] == ["bash", "finish"]
        assert calls[0].arguments["command"] == reference_steps(task)[0]
        assert "<|im_end|>" in own  # the model learns to end its turn after the call
        assert "[bash]" in observation and "bash" not in own.split("</tool_call>")[-1]
        assert 0 < sum(mask) < len(mask)


def test_a_demonstration_that_fails_its_verifier_is_an_error(tmp_path, tokenizer):
    write_word_task(tmp_path / "suite", 0, steps=["echo wrong > /app/out-0.txt"])
    tasks = load_harbor_suite(tmp_path / "suite")
    with pytest.raises(DemonstrationFailed, match=r"task write-0 .*reference steps failed the verifier"):
        collect_demonstrations(tasks, tokenizer, AgentConfig(tools=["bash", "finish"]))


def test_reference_steps_errors_name_the_file(tmp_path):
    task_dir = write_word_task(tmp_path / "suite", 0)
    (task_dir / "solution" / "steps.json").write_text('"echo hi"')
    (task,) = load_harbor_suite(tmp_path / "suite")
    with pytest.raises(TaskSourceError, match=r"steps.json: must be a non-empty list of bash commands"):
        reference_steps(task)
    (task_dir / "solution" / "steps.json").unlink()
    with pytest.raises(TaskSourceError, match=r"task write-0: no reference steps"):
        reference_steps(task)


def test_plan_batches_is_a_seeded_cover_of_every_epoch():
    plan = plan_batches(10, 4, epochs=2, seed=1)
    assert plan == plan_batches(10, 4, epochs=2, seed=1)
    assert [len(b) for b in plan] == [4, 4, 2, 4, 4, 2]
    assert sorted(i for b in plan[:3] for i in b) == list(range(10))
    assert plan[:3] != plan[3:]


def test_plan_batches_by_a_token_budget_keeps_the_order_and_fits_the_budget():
    tokens = [5, 3, 9, 2, 4, 12, 1, 6, 3, 2]
    plan = plan_batches(10, 4, epochs=2, seed=1, tokens=tokens, batch_tokens=10)
    by_count = plan_batches(10, 4, epochs=2, seed=1)
    order = [i for b in plan for i in b]
    assert order == [i for b in by_count for i in b]  # the same shuffle, cut elsewhere
    assert all(sum(tokens[i] for i in b) <= 10 or len(b) == 1 for b in plan)
    assert [5] in plan  # 12 tokens: over the budget, alone
    one_epoch = plan_batches(10, 4, epochs=1, seed=1, tokens=tokens, batch_tokens=10)
    assert plan[: len(one_epoch)] == one_epoch
    for first, second in zip(one_epoch, one_epoch[1:]):  # a cut only where the next one would not fit
        assert sum(tokens[i] for i in first) + tokens[second[0]] > 10


SFT_CONFIG = """
seed = 1
threads = 1

[model]
name = "tiny-llama"

[[domains]]
name = "words"
source = "harbor:{suite}"
kind = "terminal"
heldout = 2

[agent]
tools = ["bash", "finish"]
max_steps = 2
reply_tokens = 16
max_context_tokens = 1024

[optim]
micro_batch_tokens = 2048

[sft]
demonstrations = {demonstrations}
batch_size = 2
epochs = 3
lr = 3e-3
warmup_steps = 0
rejection_rounds = 0
checkpoint_every = 2
evaluate = {evaluate}
"""


def write_sft_config(directory: Path, suite: Path, demonstrations: int = 6, evaluate: bool = False) -> Path:
    path = directory / "sft.toml"
    path.write_text(SFT_CONFIG.format(suite=suite, demonstrations=demonstrations, evaluate=str(evaluate).lower()))
    return path


def run_cli(args, faults: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if faults:
        env["POSTTRAIN_FAULTS"] = faults
    return subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=600)


def sft_steps(out: Path) -> list[dict]:
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if "nll" in r]


@pytest.mark.slow
def test_sft_learns_writes_a_model_and_resumes_after_a_kill_on_the_same_batches(tmp_path, word_suite):
    config = write_sft_config(tmp_path, word_suite, evaluate=True)
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    done = run_cli(["sft", str(config), "--out", str(straight)])
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["model"] == f"hf:{straight / 'model'}" and summary["steps"] == 9  # 3 epochs x 3 batches
    assert set(summary["heldout_pass_at_1"]) == {"base", "sft"}
    rows = sft_steps(straight)
    assert [r["step"] for r in rows] == list(range(1, 10))
    assert rows[-1]["nll"] < 0.85 * rows[0]["nll"]  # it learns the demonstrations
    assert len(read_transcripts(straight / "demonstrations.jsonl")) == 6
    assert (straight / "model" / "config.json").is_file() and (straight / "eval_base.json").is_file()

    killed_run = run_cli(["sft", str(config), "--out", str(killed)], faults="die:sft_step@5")
    assert killed_run.returncode == -signal.SIGKILL
    resumed = run_cli(["sft", "--resume", "--out", str(killed)])
    assert resumed.returncode == 0, resumed.stderr
    assert [r["step"] for r in sft_steps(killed)] == list(range(1, 10))  # each step once
    assert [r["nll"] for r in sft_steps(killed)] == [r["nll"] for r in rows]  # the same batches, same RNG
    a = load_file(straight / "model" / "model.safetensors")
    b = load_file(killed / "model" / "model.safetensors")
    assert all((a[k] == b[k]).all() for k in a)

    # the result is a model that eval and train accept
    evaluated = run_cli(
        [
            "eval",
            "--tasks",
            str(word_suite),
            "--names",
            "write-0",
            "--agent",
            "model",
            "--model",
            summary["model"],
            "--out",
            str(tmp_path / "eval"),
        ]
    )
    assert evaluated.returncode == 0, evaluated.stderr


def test_sft_saves_the_agent_settings_with_its_checkpoints_and_its_model(tmp_path, word_suite):
    from posttrain.agent.trained_settings import TrainedAgentSettings, read_agent_settings
    from posttrain.config import load_config
    from posttrain.pipeline.sft.stage import sft

    config = write_sft_config(tmp_path, word_suite, demonstrations=2)
    config.write_text(config.read_text().replace("epochs = 3", "epochs = 1"))
    out = tmp_path / "sft"
    sft(config, out)
    expected = TrainedAgentSettings.from_agent_config(load_config(config).agent)
    assert expected.tools == ["bash", "finish"] and "read_file" not in expected.system_prompt
    (checkpoint,) = (out / "checkpoints").iterdir()
    assert read_agent_settings(checkpoint) == expected
    assert read_agent_settings(out / "model") == expected


def test_sft_without_data_and_without_a_table_fail_in_one_line(tmp_path, word_suite):
    result = run_cli(
        ["sft", str(write_sft_config(tmp_path, word_suite, demonstrations=0)), "--out", str(tmp_path / "a")]
    )
    assert result.returncode == 2
    assert "error: [sft]: no data: demonstrations = 0 and no data files" in result.stderr
    plain = tmp_path / "plain.toml"
    plain.write_text(write_sft_config(tmp_path, word_suite).read_text().split("[sft]")[0])
    result = run_cli(["sft", str(plain), "--out", str(tmp_path / "b")])
    assert result.returncode == 2 and "no [sft] table" in result.stderr
    with pytest.raises(PosttrainError, match="transcript file not found"):
        read_transcripts(tmp_path / "missing.jsonl")


def test_look_act_check_demonstrations_list_the_root_before_and_after_and_still_pass(tokenizer):
    from posttrain.tasks.terminal_gen import TerminalGenSource

    families = ["text-processing", "permissions-find", "composite"]
    source = TerminalGenSource("terminal", families, [1, 2], seed=3, size=24)
    tasks = [source.get(i) for i in range(24)]
    assert {t.metadata["root"] for t in tasks} - {"/app"}, "the draw should include another root than /app"
    agent = AgentConfig(tools=["bash", "finish"], max_steps=8)
    transcripts = collect_demonstrations(tasks, tokenizer, agent, style="look-act-check")
    for task, transcript in zip(tasks, transcripts):
        segments = transcript.segments
        own = tokenizer.decode([t for s in segments for t, m in zip(s["completion_ids"], s["completion_mask"]) if m])
        commands = [c.arguments.get("command") for c in parse_tool_calls(own) if c.name == "bash"]
        steps = reference_steps(task)
        if steps[0].startswith("ls "):  # the composite family looks and checks already
            assert commands == steps
        else:
            root = task.metadata["root"]
            assert commands[0].startswith("ls -R ") and root in commands[0].replace("'", "")
            assert commands[1:-1] == steps and commands[-1].startswith("ls -lR ")
