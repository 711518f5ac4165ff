"""`posttrain serve --record DIR`: every finished chat completion appended to DIR/traces.jsonl,
one row a choice, in the chat-data format `posttrain sft --data` trains on
(pipeline/sft/conversations.py).

A row's `messages` are the ones the chat template rendered for the model (a default system
prompt inserted, tools described in the system message, earlier calls as <tool_call> tags,
tool results as <tool_response>), then the reply as the assistant's text, so rendering the row
again gives the prompt tokens the engine saw. Beside them: the exact prompt and completion token
ids, the engine's logprob of each completion token, the finish reason, the model served and its
tokenizer's fingerprint (`posttrain sft` leaves out rows of another tokenizer), and the reply in OpenAI's shape
(`response`). A row is written whole and fsynced before the next one: a killed server loses at
most the conversation it was writing, never a finished one.

    recorder = TraceRecorder(Path("traces"), model="smollm2-135m")  # before the model loads
    recorder.tokenizer = tokenizer_fingerprint(tokenizer)            # once it has
    recorder.record(trace_row(...))
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from posttrain.errors import PosttrainError

TRACES_FILE = "traces.jsonl"


def trace_row(
    messages: list[dict],
    reply_text: str,
    response: dict,
    prompt_token_ids: list[int],
    completion_token_ids: list[int],
    logprobs: list[float] | None,
    finish_reason: str,
    model: str,
    tokenizer: str,
    request_id: str,
) -> dict:
    """One finished choice as a chat-data row (see the module docstring)."""
    return {
        "messages": [*messages, {"role": "assistant", "content": reply_text}],
        "prompt_token_ids": list(prompt_token_ids),
        "completion_token_ids": list(completion_token_ids),
        "logprobs": None if logprobs is None else [float(x) for x in logprobs],
        "finish_reason": finish_reason,
        "model": model,
        "tokenizer": tokenizer,
        "response": response,
        "request_id": request_id,
        "created": int(time.time()),
    }


class TraceRecorder:
    """Appends rows to DIR/traces.jsonl from any thread, one whole fsynced line at a time."""

    def __init__(self, directory: Path, model: str, tokenizer: str = "") -> None:
        self.path = Path(directory) / TRACES_FILE
        self.model = model
        self.tokenizer = tokenizer  # models/tokenizer_fingerprint.py
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (open for the server's life)
        except OSError as exc:
            raise PosttrainError(f"--record {directory}: cannot write {self.path}: {exc.strerror or exc}") from None
        self._lock = threading.Lock()
        self.rows = 0

    def record(self, row: dict) -> None:
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            os.fsync(self._file.fileno())
            self.rows += 1

    def close(self) -> None:
        with self._lock:
            self._file.close()
