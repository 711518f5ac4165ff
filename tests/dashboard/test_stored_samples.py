"""Samples as the store holds them, shown down to the token: an agent episode stored by training
(EpisodeGroup.store_rows) opens as its turns, with the model's tokens coloured, the tool calls
with their results, snapshots; the episode is the oracle's from the real eval run, its first
reply given token ids and logprobs as a model's would have (the oracle generates none). A
sample whose details hold the trainer's logprobs and entropy is coloured by either."""

import json

from posttrain.agent.trajectory import ToolCallRecord, Trajectory, TurnRecord
from posttrain.dashboard.token_text import TokenTexts, tokenizer_file
from posttrain.observe.trajectory_store import TrajectoryStore
from posttrain.pipeline.terminal_rollout import EpisodeGroup
from posttrain.tasks.harbor import load_harbor_task
from posttrain.tasks.records import Reward
from tests.dashboard.conftest import TASK, Server, get


def stored_episode(eval_dir, run_dir):
    data = json.loads(next((eval_dir / "trajectories").glob("*.json")).read_text())
    turns = [TurnRecord(**{**t, "tool_calls": [ToolCallRecord(**c) for c in t["tool_calls"]]}) for t in data["turns"]]
    tokenizer = TokenTexts("tiny-llama")
    from tokenizers import Tokenizer

    ids = Tokenizer.from_file(str(tokenizer_file("tiny-llama"))).encode(turns[0].text).ids
    turns[0].completion_ids, turns[0].logprobs, turns[0].token_versions = ids, [-0.25] * len(ids), [3] * len(ids)
    trajectory = Trajectory(
        **{k: v for k, v in data.items() if k not in ("turns", "reward", "summary")},
        turns=turns,
        reward=Reward(**data["reward"]),
    )
    run_dir.mkdir()
    (run_dir / "config.toml").write_text('[model]\nname = "tiny-llama"\n')
    store = TrajectoryStore(run_dir / "trajectories.sqlite")
    store.add_groups(4, "train", EpisodeGroup(load_harbor_task(TASK), [trajectory]).store_rows([0.5]))
    store.close()
    return turns, tokenizer


def test_a_stored_agent_episode_shows_its_turns_tool_calls_and_tokens(directories, tmp_path, browser):
    turns, tokenizer = stored_episode(directories["eval"], tmp_path / "agent-run")
    with Server([tmp_path / "agent-run"]) as server:
        sample = get(server, "/api/runs/0/samples/1")
        assert [t["tool_calls"][0]["name"] for t in sample["turns"] if t["tool_calls"]] == ["bash", "finish"]
        first = sample["turns"][0]
        assert "".join(first["tokens"]["text"]) == tokenizer.text(turns[0].completion_ids)
        assert first["tokens"]["policy_version"][0] == 3 and first["snapshot_id"] == turns[0].snapshot_id
        assert sample["advantage"] == 0.5 and sample["passed"] is True

        page = browser.new_page()
        page.goto(server.url + "/run/0/sample/1")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#error").count() == 0, page.locator("#error").inner_text()
        assert page.locator(".turn").count() == len(turns)
        assert page.locator(".turn").first.locator(".tok").count() == len(turns[0].completion_ids)
        assert "tool bash" in page.locator(".turn .toolcall").first.inner_text()
        assert "solve.sh" in page.locator(".turn .toolcall .arguments").first.inner_text()
        page.close()


def test_stored_trainer_logprobs_and_entropy_colour_the_tokens_by_their_difference(tmp_path, browser):
    run = tmp_path / "with-trainer"
    run.mkdir()
    (run / "config.toml").write_text('[model]\nname = "tiny-llama"\n')
    engine, trainer, entropy = [-0.5, -2.0, -0.1], [-0.5, -1.5, -0.3], [0.2, 3.5, 1.0]
    store = TrajectoryStore(run / "trajectories.sqlite")
    row = {
        "task_id": "add/1",
        "domain": "add",
        "sample_index": 0,
        "policy_version": 2,
        "prompt_token_ids": [1, 2],
        "completion_token_ids": [28, 29, 30],
        "logprobs": engine,
        "text": "=>?",
        "finish_reason": "stop",
        "reward": 1.0,
        "passed": True,
        "details": {"trainer_logprobs": trainer, "entropy": entropy, "expected": "3"},
        "advantage": 1.0,
    }
    store.add_groups(1, "train", [row])
    store.close()
    with Server([run]) as server:
        tokens = get(server, "/api/runs/0/samples/1")["tokens"]
        assert tokens["difference"] == [t - e for t, e in zip(trainer, engine, strict=True)]
        assert tokens["entropy"] == entropy and tokens["trainer_logprob"] == trainer
        page = browser.new_page()
        page.goto(server.url + "/run/0/sample/1")
        page.wait_for_selector(".tokens .tok")
        page.locator("select.colour-by").select_option("difference")
        second = page.locator(".tokens .tok").nth(1)
        assert "rgba(40, 90, 220" in second.get_attribute("style")  # trainer above engine: blue
        second.hover()
        tip = page.locator("#tip").inner_text()
        assert "difference: 0.5" in tip and "entropy: 3.5" in tip and "trainer_logprob: -1.5" in tip
        page.close()
