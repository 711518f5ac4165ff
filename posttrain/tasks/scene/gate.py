"""The hard validity gate: a reply is a valid scene answer for a task, or it scores 0.

In order: the reply holds a JSON object within the size and nesting bounds (extraction.py), it
parses, it matches the schema (every number finite and within the sane bounds, no side under
MIN_SIZE, at most MAX_OBJECTS objects), every id is unique and is one the task asked for. The
first failure is the reason."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from posttrain.tasks.scene.extraction import ExtractionError, extract_json_text
from posttrain.tasks.scene.schema import SceneAnswer, SceneTask


@dataclass(frozen=True)
class GateResult:
    answer: SceneAnswer | None
    reason: str | None  # why the answer is invalid; None when it is valid

    @property
    def valid(self) -> bool:
        return self.answer is not None


def gate(reply: str, task: SceneTask) -> GateResult:
    read = read_answer(reply)
    if not read.valid:
        return read
    asked = {o.id for o in task.objects}
    unknown = next((o.id for o in read.answer.objects if o.id not in asked), None)
    if unknown is not None:
        return GateResult(None, f"object {unknown!r} is not one the task asks for")
    return read


def read_answer(reply: str) -> GateResult:
    """The gate's checks that need no task: bounds, JSON, schema, at least one object, unique ids."""
    try:
        text = extract_json_text(reply)
    except ExtractionError as exc:
        return GateResult(None, str(exc))
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return GateResult(None, f"not valid JSON ({getattr(exc, 'msg', type(exc).__name__)})")
    try:
        answer = SceneAnswer.model_validate(data)
    except ValidationError as exc:
        return GateResult(None, schema_reason(exc))
    if not answer.objects:
        return GateResult(None, "the scene has no objects")
    ids = [o.id for o in answer.objects]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        return GateResult(None, f"object id {duplicate!r} appears {ids.count(duplicate)} times")
    return GateResult(answer, None)


def schema_reason(exc: ValidationError) -> str:
    """The first schema error as `objects.2.position.0: Input should be a finite number`."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "(the answer)"
    count = exc.error_count()
    more = f" (and {count - 1} more error{'s' if count > 2 else ''})" if count > 1 else ""
    return f"{where}: {error['msg']}{more}"
