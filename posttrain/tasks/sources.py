"""Task sources: an indexable pool of tasks of one domain.

`reasoning-gym:<name>` wraps any reasoning-gym generator (items are generated on access, so
a pool of a million items costs nothing up front); `jsonl:<path>` (or a path ending in
.jsonl) reads one task per line: {"prompt": ..., "answer": ..., "verifier": ..., "id"?: ...}.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from pathlib import Path
from typing import Any, Protocol

from posttrain.errors import TaskSourceError, did_you_mean
from posttrain.tasks import gym_entries
from posttrain.tasks.reasoning_gym_import import import_reasoning_gym
from posttrain.tasks.records import Task
from posttrain.tasks.verifiers import VERIFIERS


class TaskSource(Protocol):
    domain: str

    def __len__(self) -> int: ...

    def get(self, index: int) -> Task: ...


def content_key(task: Task) -> str:
    """Identity of a task's content: two items with the same instruction and answer are the
    same item, whatever their index (held-out splits compare these, not indices). A generated
    terminal task's instruction can repeat over different data, so its content digest counts too."""
    parts = [task.instruction, str(task.answer)]
    if "content_digest" in task.metadata:
        parts.append(task.metadata["content_digest"])
    payload = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


class ReasoningGymSource:
    def __init__(
        self,
        domain: str,
        generator: str,
        seed: int,
        size: int,
        params: dict[str, Any],
        prompt_template: str,
        answer_extraction: str,
        reward_timeout_s: float | None = None,
    ) -> None:
        reasoning_gym = import_reasoning_gym()
        from reasoning_gym.factory import DATASETS

        if generator not in DATASETS:
            raise TaskSourceError(
                f"domain {domain!r}: unknown reasoning-gym generator {generator!r}{did_you_mean(generator, DATASETS)}; "
                f"{len(DATASETS)} exist, e.g. {', '.join(sorted(DATASETS)[:5])} (all of them: posttrain tasks sources)"
            )
        try:
            self.dataset = reasoning_gym.create_dataset(generator, seed=seed, size=size, **params)
        except (TypeError, ValueError, AssertionError) as exc:
            raise TaskSourceError(
                f"domain {domain!r}: reasoning-gym:{generator} rejected params {params}: {exc}"
            ) from exc
        self.domain = domain
        self.generator = generator
        self.prompt_template = prompt_template
        self.answer_extraction = answer_extraction
        # the scorer's time limit (the verifier's default when unset)
        self.scoring = {"reward_timeout_s": reward_timeout_s} if reward_timeout_s else {}

    def __len__(self) -> int:
        return len(self.dataset)

    def get(self, index: int) -> Task:
        entry = self.dataset[index]
        metadata = gym_entries.encode(entry["metadata"])
        entry = {"question": entry["question"], "answer": entry["answer"], "metadata": metadata}
        return Task(
            id=f"{self.domain}/{index}",
            domain=self.domain,
            instruction=self.prompt_template.format(question=entry["question"]),
            verifier="reasoning-gym",
            answer=entry["answer"],
            metadata={"entry": entry, "answer_extraction": self.answer_extraction, "index": index, **self.scoring},
        )


class JsonlSource:
    def __init__(self, domain: str, path: Path, prompt_template: str, answer_extraction: str | None) -> None:
        self.domain = domain
        self.path = path
        if not path.is_file():
            raise TaskSourceError(f"domain {domain!r}: task file {path} does not exist")
        self.tasks: list[Task] = []
        for line_no, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            self.tasks.append(self._parse(line, line_no, prompt_template, answer_extraction))
        if not self.tasks:
            raise TaskSourceError(f"{path}: no tasks in the file")

    def _parse(self, line: str, line_no: int, template: str, extraction: str | None) -> Task:
        where = f"{self.path}:{line_no}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskSourceError(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise TaskSourceError(f"{where}: each line must be a JSON object")
        for key in ("prompt", "answer"):
            if key not in row:
                raise TaskSourceError(f"{where}: missing field {key!r}")
        verifier = row.get("verifier", "exact")
        if verifier not in VERIFIERS or verifier in ("reasoning-gym", "scene"):
            raise TaskSourceError(
                f"{where}: field 'verifier': unknown verifier {verifier!r}; choose one of exact, math, numeric"
            )
        unknown = set(row) - {"id", "prompt", "answer", "verifier", "answer_extraction", "metadata"}
        if unknown:
            raise TaskSourceError(f"{where}: unknown field(s) {sorted(unknown)}")
        metadata = dict(row.get("metadata") or {})
        rule = row.get("answer_extraction") or extraction
        if rule:
            metadata["answer_extraction"] = rule
        metadata["line"] = line_no
        return Task(
            id=f"{self.domain}/{row.get('id', line_no)}",
            domain=self.domain,
            instruction=template.format(question=row["prompt"]),
            verifier=verifier,
            answer=row["answer"],
            metadata=metadata,
        )

    def __len__(self) -> int:
        return len(self.tasks)

    def get(self, index: int) -> Task:
        return self.tasks[index]


class HarborSource:
    """Terminal tasks from Harbor task directories: a suite directory or one task."""

    def __init__(self, domain: str, root: Path, tags: list[str] | None = None, names: list[str] | None = None) -> None:
        from posttrain.tasks.harbor import load_harbor_suite

        self.root = root
        self.tasks = load_harbor_suite(root, domain=domain, tags=tags or None, names=names or None)

    def __len__(self) -> int:
        return len(self.tasks)

    def get(self, index: int) -> Task:
        return self.tasks[index]


class ScoredBy:
    """A source whose tasks are scored by the domain's `verifier` (one, or several with weights)
    instead of their own; everything else is the wrapped source's."""

    def __init__(self, source: TaskSource, verifiers: list[tuple[str, float]], search_path: Path, timeout_s: float):
        self.source = source
        if len(verifiers) == 1 and verifiers[0][1] == 1.0:
            self.verifier, extra = verifiers[0][0], {}
        else:
            self.verifier, extra = "weighted", {"rewards": [[name, weight] for name, weight in verifiers]}
        if any(name.startswith("python:") for name, _ in verifiers):
            extra |= {"reward_search_path": str(search_path), "reward_timeout_s": timeout_s}
        self.metadata = extra

    def __getattr__(self, name: str):
        if name == "source":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.source, name)

    def __len__(self) -> int:
        return len(self.source)

    def get(self, index: int) -> Task:
        task = self.source.get(index)
        return task.model_copy(update={"verifier": self.verifier, "metadata": {**task.metadata, **self.metadata}})


class WithoutItems:
    """A source less some of its items, named by index (what the quality gate quarantined);
    the items kept keep their own ids, and everything else is the wrapped source's."""

    def __init__(self, source: TaskSource, left_out: set[int]):
        self.source = source
        self.left_out = sorted(i for i in left_out if 0 <= i < len(source))

    def __getattr__(self, name: str):
        if name == "source":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.source, name)

    def __len__(self) -> int:
        return len(self.source) - len(self.left_out)

    def get(self, index: int) -> Task:
        # the smallest j with j - (left-out indices <= j) == index is the index-th item kept
        position = index
        while True:
            following = index + bisect.bisect_right(self.left_out, position)
            if following == position:
                return self.source.get(position)
            position = following
