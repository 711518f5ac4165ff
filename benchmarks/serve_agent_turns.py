"""Writes the agent-turn workload of `posttrain serve bench`: real multi-turn terminal episodes.

The reference steps of generated terminal tasks (terminal-gen, every family) are replayed
through the agent loop in a real sandbox (the SFT stage's demonstrations: one bash call a turn,
then finish, kept when the verifier passes); every assistant turn becomes one request: the
episode so far (system prompt with the tools, the instruction, earlier calls and their
observations) as SmolLM2 token ids, and the reference reply.

    python benchmarks/serve_agent_turns.py --count 48 --out benchmarks/data/serve_agent_turns.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from posttrain.agent.loop import AgentConfig
from posttrain.models.loading import load_tokenizer
from posttrain.pipeline.sft.demonstrations import collect_demonstrations
from posttrain.tasks.terminal_gen.registry import FAMILIES
from posttrain.tasks.terminal_gen.source import TerminalGenSource


def turns_of(transcript) -> list[dict]:
    """One request per run of the model's own tokens: the tokens before it, and the run."""
    turns = []
    for segment in transcript.segments:
        ids = list(segment["prompt_ids"]) + list(segment["completion_ids"])
        mask = [0] * len(segment["prompt_ids"]) + list(segment["completion_mask"])
        start = None
        for position, own in enumerate(mask + [0]):
            if own and start is None:
                start = position
            elif not own and start is not None:
                turns.append(
                    {"task_id": transcript.task_id, "prompt_ids": ids[:start], "reference_ids": ids[start:position]}
                )
                start = None
    return turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=48)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/serve_agent_turns.jsonl"))
    args = parser.parse_args()
    tokenizer = load_tokenizer("smollm2-135m")
    source = TerminalGenSource("bench", sorted(FAMILIES), [1, 2, 3], seed=0, size=args.count)
    tasks = [source.get(index) for index in range(args.count)]
    transcripts = collect_demonstrations(tasks, tokenizer, AgentConfig(tools=["bash", "finish"]))
    turns = [turn for transcript in transcripts for turn in turns_of(transcript)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(turn) + "\n" for turn in turns))
    print(json.dumps({"tasks": len(transcripts), "turns": len(turns), "out": str(args.out)}))


if __name__ == "__main__":
    main()
