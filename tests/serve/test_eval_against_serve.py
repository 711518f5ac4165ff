"""`posttrain eval --model openai:URL#NAME` against `posttrain serve`: the terminal suite end to
end over HTTP, as chat messages (any server) and as token ids (a server sharing the tokenizer)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.factory import engine_for_spec
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.token_ids import chat_prompt_ids
from tests.sandbox.conftest import BWRAP_MISSING
from tests.serve.conftest import start_server

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "user", "content": "Name a color."}]


@pytest.fixture(scope="module")
def server():
    from posttrain.serve.server import ServerSettings

    running, stop = start_server(ServerSettings("smollm2-135m", served_model_name="smol", max_concurrency=4))
    yield running
    stop()


def test_chat_messages_and_shared_token_ids_give_the_local_engines_tokens(server):
    engine = server.engine
    tokenizer = engine.tokenizer
    params = SamplingParams(temperature=0, max_tokens=8)
    local = BuiltinEngine(engine.model, tokenizer).generate(
        [GenerationRequest("l", chat_prompt_ids(tokenizer, MESSAGES), params)]
    )[0]
    spec = f"openai:{server.base_url}#smol"
    shared = engine_for_spec(spec, shared_tokenizer="smollm2-135m").engine
    exact = shared.generate([GenerationRequest("s", local.prompt_token_ids, params, MESSAGES)])[0]
    assert exact.token_ids == local.token_ids and exact.text == local.text  # token ids, exact
    chat = engine_for_spec(spec).engine
    assert chat.prompt_format == "chat"
    reply = chat.generate([GenerationRequest("c", local.prompt_token_ids, params, MESSAGES)])[0]
    assert reply.text == local.text  # the server applied the same chat template to the messages


@pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))
def test_posttrain_eval_runs_the_terminal_suite_against_posttrain_serve(server, tmp_path):
    out = tmp_path / "eval"
    command = [sys.executable, "-m", "posttrain.cli", "eval", "--tasks", str(ROOT / "tasks" / "terminal")]
    command += ["--names", "hello-file", "--agent", "model", "--model", f"openai:{server.base_url}#smol"]
    command += ["--out", str(out), "--max-steps", "2", "--reply-tokens", "24"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "unused"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["hello-file"]
    trajectory = json.loads((out / rows[0]["trajectory"]).read_text())
    assert trajectory["turns"] and trajectory["turns"][0]["completion_ids"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_attempts"] == 1 and summary["tokens"]["out"] > 0
