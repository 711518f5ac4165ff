"""Agent transcripts to learn from, in the agent loop's own token format, and their JSONL files.

A transcript is one verified episode: its training segments (prompt ids, then the model's
tokens with the observations between them masked out), exactly what multi-turn RL trains on,
so the warm start and RL see the same tokens and the same loss mask."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from posttrain.agent.trajectory import Trajectory, training_segments
from posttrain.errors import PosttrainError
from posttrain.storage.atomic import write_text_atomic
from posttrain.tasks.records import Task
from posttrain.train.samples import TrainSample


@dataclass
class Transcript:
    task_id: str
    source: str  # "demonstration" | "rejection"
    segments: list[dict]  # prompt_ids, completion_ids, completion_mask
    family: str | None = None
    difficulty: int | None = None

    def samples(self) -> list[TrainSample]:
        """Supervised samples: advantage 1, no engine logprobs (the tokens were not sampled here)."""
        return [
            TrainSample(
                list(s["prompt_ids"]),
                list(s["completion_ids"]),
                [0.0] * len(s["completion_ids"]),
                1.0,
                list(s["completion_mask"]),
            )
            for s in self.segments
        ]

    @property
    def tokens(self) -> int:
        """Every token the trainer runs: prompts and completions."""
        return sum(len(s["prompt_ids"]) + len(s["completion_ids"]) for s in self.segments)

    @property
    def trained_tokens(self) -> int:
        return sum(sum(s["completion_mask"]) for s in self.segments)


def transcript_of(task: Task, trajectory: Trajectory, source: str) -> Transcript:
    segments = [
        {"prompt_ids": s.prompt_ids, "completion_ids": s.completion_ids, "completion_mask": s.completion_mask}
        for s in training_segments(trajectory.turns)
    ]
    return Transcript(task.id, source, segments, task.metadata.get("family"), task.metadata.get("difficulty"))


def write_transcripts(path: Path, transcripts: list[Transcript]) -> None:
    """All at once, atomically: a kill leaves the old file or the whole new one."""
    write_text_atomic(path, "".join(json.dumps(asdict(t)) + "\n" for t in transcripts))


def read_transcripts(path: Path) -> list[Transcript]:
    if not path.is_file():
        raise PosttrainError(f"{path}: transcript file not found")
    transcripts = []
    for line_no, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{line_no}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PosttrainError(f"{where}: not valid JSON ({exc.msg})") from None
        missing = {"task_id", "source", "segments"} - set(row) if isinstance(row, dict) else {"(an object)"}
        if missing:
            raise PosttrainError(f"{where}: missing field(s) {', '.join(sorted(missing))}")
        for index, segment in enumerate(row["segments"]):
            keys = {"prompt_ids", "completion_ids", "completion_mask"}
            if not isinstance(segment, dict) or keys - set(segment):
                raise PosttrainError(f"{where}: segments[{index}] needs {', '.join(sorted(keys))}")
            if len(segment["completion_ids"]) != len(segment["completion_mask"]):
                raise PosttrainError(f"{where}: segments[{index}]: completion_ids and completion_mask differ in length")
        transcripts.append(Transcript(**{k: row.get(k) for k in Transcript.__dataclass_fields__}))
    return transcripts
