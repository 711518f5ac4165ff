"""One sample as the token view draws it: token texts beside their stored values, and, for an
agent episode, its turns with their tool calls.

Token values are parallel lists (one entry per completion token): `engine_logprob` (what the
engine sampled with), `policy_version`, and where a sample's details store them (training
does, PolicyTrainer.last_token_values; for an agent episode, on its first training sequence),
`trainer_logprob` with `difference` (trainer - engine) and `entropy`. The
advantage is one number per sample (the group's baseline is per sequence), given once."""

from __future__ import annotations

from typing import Any

from posttrain.dashboard.token_text import TokenTexts


def token_columns(
    ids: list[int],
    engine: list[float],
    versions: list[int],
    texts: TokenTexts,
    trainer: list[float] | None = None,
    entropy: list[float] | None = None,
) -> dict[str, Any]:
    columns: dict[str, Any] = {
        "id": ids,
        "text": texts.pieces(ids),
        "engine_logprob": engine,
        "policy_version": versions,
    }
    if trainer is not None and len(trainer) == len(engine):
        columns["trainer_logprob"] = trainer
        columns["difference"] = [t - e for t, e in zip(trainer, engine, strict=True)]
    if entropy is not None and len(entropy) == len(engine):
        columns["entropy"] = entropy
    return columns


def sample_view(sample: dict[str, Any], texts: TokenTexts) -> dict[str, Any]:
    details = sample.get("details") or {}
    ids = sample["completion_token_ids"]
    view = {
        key: sample[key]
        for key in (
            "id",
            "step",
            "phase",
            "task_id",
            "domain",
            "sample_index",
            "policy_version",
            "reward",
            "passed",
            "advantage",
            "finish_reason",
            "text",
        )
    }
    view["prompt"] = texts.text(sample["prompt_token_ids"])
    view["tokens"] = token_columns(
        ids,
        sample["logprobs"],
        [sample["policy_version"]] * len(ids),
        texts,
        details.get("trainer_logprobs"),
        details.get("entropy"),
    )
    turns = details.get("turns") if isinstance(details.get("turns"), list) else None
    view["details"] = {k: v for k, v in details.items() if k not in ("turns", "trainer_logprobs", "entropy")}
    view["turns"] = episode_turns(turns, texts) if turns else None
    return view


def episode_turns(turns: list[dict[str, Any]], texts: TokenTexts) -> list[dict[str, Any]]:
    """An agent episode's turns (TurnRecord dicts, from trajectories.sqlite or an eval's
    trajectory JSON): the reply with its tokens, tool calls with their results and errors,
    events, snapshots taken and rollbacks made."""
    out = []
    for turn in turns:
        ids = turn.get("completion_ids") or []
        logprobs = turn.get("logprobs") or []
        versions = turn.get("token_versions") or []
        out.append(
            {
                "index": turn.get("index"),
                "text": turn.get("text", ""),
                "tokens": token_columns(ids, logprobs, versions, texts) if ids and len(logprobs) == len(ids) else None,
                "tool_calls": turn.get("tool_calls") or [],
                "events": turn.get("events") or [],
                "snapshot_id": turn.get("snapshot_id"),
                "restored_snapshot": turn.get("restored_snapshot"),
                "generate_s": turn.get("generate_s"),
                "tools_s": turn.get("tools_s"),
            }
        )
    return out


def episode_view(trajectory: dict[str, Any], texts: TokenTexts) -> dict[str, Any]:
    """An eval attempt's trajectory JSON (posttrain.agent.trajectory.Trajectory.to_dict)."""
    return {
        **{k: v for k, v in trajectory.items() if k != "turns"},
        "turns": episode_turns(trajectory.get("turns") or [], texts),
    }
