"""The engine service with a real builtin engine on the tiny model: concurrent callers, weight
updates mid-generation (both partial-rollout rules), dead callers, a failing engine step."""

import copy
import multiprocessing
import os
import signal
import threading
import time

import pytest
import torch

from posttrain.dispatch import Preempted
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.engine.service.engine_service import EngineService
from posttrain.engine.service.rollout_engine import CallAborted, EngineError
from posttrain.models.token_ids import chat_prompt_ids
from tests.conftest import assert_logprobs_match, expects_bit_equality


def prompt(tokenizer, text):
    return chat_prompt_ids(tokenizer, [{"role": "user", "content": text}])


def requests(tokenizer, n_prompts=4, max_tokens=8, n=2):
    return [
        GenerationRequest(
            f"r{i}",
            prompt(tokenizer, f"question {i} " * (i + 1)),
            SamplingParams(n=n, temperature=1.0, max_tokens=max_tokens, seed=10 + i),
        )
        for i in range(n_prompts)
    ]


@pytest.fixture
def serve(tiny_model, tokenizer):
    servers = []

    def make(rule="continue", model=None):
        server = EngineService(BuiltinEngine(model or tiny_model, tokenizer), partial_rollouts=rule)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def test_concurrent_callers_get_what_one_direct_call_gives(serve, tiny_model, tokenizer):
    reference = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer).generate(requests(tokenizer))
    server = serve()
    client = server.client()
    got = [None] * 4

    def call(i):
        got[i] = client.generate([requests(tokenizer)[i]])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    flat = [c for part in got for c in part]
    assert [(c.request_id, c.token_ids) for c in flat] == [(c.request_id, c.token_ids) for c in reference]
    bit_equal = expects_bit_equality(tiny_model)  # batched with other callers: the same bits where rows are invariant
    for served, direct in zip(flat, reference):
        assert_logprobs_match(served.logprobs, direct.logprobs, bit_equal, served.request_id)


def _perturbed(model):
    return [(name, p.detach() + 0.05 * torch.randn_like(p)) for name, p in model.named_parameters()]


def _update_mid_generation(server, tokenizer, model):
    long = GenerationRequest(
        "long",
        prompt(tokenizer, "tell a story"),
        SamplingParams(n=1, temperature=1.0, max_tokens=40, seed=1, stop_token_ids=()),
    )
    server.engine.eos_token_ids = set()  # run to max_tokens
    call = server.submit([long])
    deadline = time.monotonic() + 30
    while not call.generation.seqs or call.generation.seqs[0].num_completion_tokens < 5:
        assert time.monotonic() < deadline
        time.sleep(0.001)
    server.update_weights(_perturbed(model), version=1)
    return call.future.result(timeout=60)[0], call


def test_continue_rule_keeps_tokens_and_records_their_versions(serve, tiny_model, tokenizer):
    server = serve("continue", copy.deepcopy(tiny_model))
    completion, _ = _update_mid_generation(server, tokenizer, tiny_model)
    versions = completion.token_versions
    assert len(versions) == 40 and versions[0] == 0 and versions[-1] == 1
    assert versions == sorted(versions) and 5 <= versions.index(1) < 40
    assert completion.version == 0  # the head version: what the staleness bound counts


def test_restart_rule_regenerates_under_the_new_weights(serve, tiny_model, tokenizer):
    server = serve("restart", copy.deepcopy(tiny_model))
    completion, call = _update_mid_generation(server, tokenizer, tiny_model)
    assert completion.token_versions == [1] * 40 and call.generation.restarts == 1


def test_a_weight_hold_keeps_one_version_until_it_ends_while_generation_goes_on(serve, tiny_model, tokenizer):
    """What a background evaluation relies on: updates inside a hold wait (the newest only) and
    apply when it ends; the engine serves calls all along."""
    server = serve(model=copy.deepcopy(tiny_model))
    greedy = [
        GenerationRequest("g", prompt(tokenizer, "count to ten"), SamplingParams(n=1, temperature=0.0, max_tokens=8))
    ]
    before = server.generate(greedy)[0].token_ids
    with server.weights_held() as version:
        assert version == 0
        server.update_weights(_perturbed(tiny_model), version=1)
        server.set_version(2)  # a step that changed nothing: the version moves, the weights wait
        held = server.generate(greedy)[0]
        assert server.version == 0 and held.token_ids == before and held.version == 0
    assert server.version == 2
    after = server.generate(greedy)[0]
    assert after.version == 2 and after.token_ids != before


def _caller(address, authkey, prompt_ids, ready):
    from posttrain.engine.service.transport import EngineClient

    ready.set()
    EngineClient(address, authkey).generate(
        [GenerationRequest("x", prompt_ids, SamplingParams(n=4, temperature=1.0, max_tokens=2000, seed=0))]
    )


def test_a_caller_that_dies_has_its_generations_aborted(serve, tokenizer):
    server = serve()
    server.engine.eos_token_ids = set()
    client = server.client()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_caller, args=(client.address, client.authkey, prompt(tokenizer, "hi"), ready))
    proc.start()
    assert ready.wait(60)
    deadline = time.monotonic() + 60
    while not server.engine.scheduler.running:
        assert time.monotonic() < deadline and proc.is_alive()
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    while server.engine.scheduler.has_work():
        assert time.monotonic() < deadline, "the dead caller's sequences kept running"
        time.sleep(0.01)
    assert server.engine.blocks.num_free == len(server.engine.blocks.blocks)  # every KV block is back


def test_a_failing_engine_step_fails_the_calls_in_flight_and_the_service_goes_on(serve, tiny_model, tokenizer):
    server = serve(model=copy.deepcopy(tiny_model))
    failures = []

    def fail_once(module, args):
        if not failures:
            failures.append(1)
            raise RuntimeError("injected: a kernel failed")

    handle = server.engine.model.model.embed_tokens.register_forward_pre_hook(fail_once)
    client = server.client()
    with pytest.raises(EngineError, match="injected"):
        client.generate(requests(tokenizer, n_prompts=2))
    handle.remove()
    assert not server.engine.scheduler.has_work()  # the failed call's sequences were aborted
    assert len(client.generate(requests(tokenizer, n_prompts=2))) == 4


def test_a_cancelled_caller_aborts_its_call(serve, tokenizer):
    server = serve()
    server.engine.eos_token_ids = set()
    cancel = threading.Event()
    client = server.client().with_cancel(cancel.is_set, Preempted)
    threading.Timer(0.3, cancel.set).start()
    long = [GenerationRequest("x", prompt(tokenizer, "hi"), SamplingParams(n=1, max_tokens=2000, seed=0))]
    with pytest.raises(Preempted):
        client.generate(long)
    with pytest.raises(CallAborted):  # the same through the in-process path
        call = server.submit(long)
        server.abort(call)
        call.future.result(timeout=30)


def test_close_leaves_no_thread_of_the_service_running(tiny_model, tokenizer):
    # a service thread that outlives close() may drop the last reference to the engine while the
    # interpreter shuts down, which aborts the process: close() must join them all, including
    # the one serving a client that is still connected and idle
    before = set(threading.enumerate())
    server = EngineService(BuiltinEngine(tiny_model, tokenizer))
    client = server.client()
    assert len(client.generate(requests(tokenizer, n_prompts=1, max_tokens=4, n=1))) == 1
    started = {t for t in threading.enumerate() if t.name.startswith("engine-")} - before
    assert {t.name for t in started} == {"engine-loop", "engine-accept", "engine-conn"}
    server.close()
    assert [t.name for t in started if t.is_alive()] == []
    server.close()  # a second close is harmless
