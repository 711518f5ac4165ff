"""Scene task and answer files: read from a path or any fsspec URL, with errors that name the file."""

from __future__ import annotations

import json

from pydantic import ValidationError

from posttrain.errors import PosttrainError
from posttrain.storage.artifacts import read_artifact
from posttrain.tasks.scene.gate import read_answer, schema_reason
from posttrain.tasks.scene.schema import SceneAnswer, SceneTask


def load_task(url: str) -> SceneTask:
    text = _text(url)
    try:
        return SceneTask.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise PosttrainError(f"{url}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except ValidationError as exc:
        raise PosttrainError(f"{url}: not a scene task: {schema_reason(exc)}") from None


def load_reply(url: str) -> str:
    """An answer file's whole text: a bare JSON scene or a model's reply around one."""
    return _text(url)


def load_answer(url: str) -> SceneAnswer:
    """A scene answer that passes the task-free part of the validity gate (to render it)."""
    read = read_answer(load_reply(url))
    if not read.valid:
        raise PosttrainError(f"{url}: not a valid scene answer: {read.reason}")
    return read.answer


def _text(url: str) -> str:
    try:
        return read_artifact(url).decode("utf-8")
    except UnicodeDecodeError:
        raise PosttrainError(f"{url}: not UTF-8 text") from None
