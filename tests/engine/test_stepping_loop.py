"""The one engine loop on the builtin engine and the tiny model: token updates that add up to
the completion a direct call gives, admission in order under max_running, deadlines, aborts of
waiting and running generations, and what close leaves. (Training's adapter:
tests/engine/service/test_engine_service.py; serving's: tests/serve/test_openai_api.py.)"""

import copy
import threading
import time
from contextlib import ExitStack, closing

import pytest

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.engine.stepping_loop import SteppingLoop
from posttrain.models.token_ids import chat_prompt_ids


def request(tokenizer, name: str, max_tokens: int = 6, n: int = 2) -> GenerationRequest:
    prompt = chat_prompt_ids(tokenizer, [{"role": "user", "content": f"say {name}"}])
    return GenerationRequest(name, prompt, SamplingParams(n=n, temperature=1.0, max_tokens=max_tokens, seed=3))


class Recorder:
    """Every callback of the generations it watches, in order; `wait()` until all are done."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.updates: dict[int, list] = {}
        self._done = threading.Condition()

    def admit(self, gen) -> None:
        self.events.append(("admit", gen.id))

    def tokens(self, gen, update) -> None:
        self.updates.setdefault(gen.id, []).append(update)

    def done(self, gen) -> None:
        with self._done:
            self.events.append(("done", gen.id))
            self._done.notify_all()

    def wait(self, count: int, timeout: float = 60) -> None:
        with self._done:
            assert self._done.wait_for(lambda: sum(e[0] == "done" for e in self.events) >= count, timeout)


@pytest.fixture
def stepping(tiny_model, tokenizer):
    """make(max_running, endless): a started loop on a fresh engine (endless: no EOS token)."""
    with ExitStack() as started:

        def make(max_running=None, endless=False):
            engine = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer)
            engine.eos_token_ids = set() if endless else engine.eos_token_ids
            loop = started.enter_context(closing(SteppingLoop(engine, max_running)))
            loop.start()
            return loop

        yield make


def test_token_updates_add_up_to_the_completion_a_direct_call_gives(stepping, tiny_model, tokenizer):
    direct = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer).generate([request(tokenizer, "a")])
    loop, seen = stepping(), Recorder()
    gen = loop.submit([request(tokenizer, "a")], seen.done, seen.tokens, seen.admit)
    seen.wait(1)
    assert seen.events == [("admit", gen.id), ("done", gen.id)]
    assert [(c.request_id, c.token_ids, c.logprobs) for c in gen.completions] == [
        (c.request_id, c.token_ids, c.logprobs) for c in direct
    ]
    for index, completion in enumerate(gen.completions):
        updates = [u for u in seen.updates[gen.id] if u.sample_index == index]
        assert [t for u in updates for t in u.token_ids] == completion.token_ids
        assert [u.completion for u in updates] == [None] * (len(updates) - 1) + [completion]
    assert loop.usage.steps > 0 and loop.held() == 0


def test_max_running_admits_in_order_once_a_slot_frees(stepping, tokenizer):
    loop, seen = stepping(max_running=1), Recorder()
    first, second = (loop.submit([request(tokenizer, name, n=1)], seen.done, on_admit=seen.admit) for name in "ab")
    seen.wait(2)
    assert seen.events == [("admit", first.id), ("done", first.id), ("admit", second.id), ("done", second.id)]


def test_a_generation_past_its_deadline_is_aborted_and_says_so(stepping, tokenizer):
    loop, seen = stepping(endless=True), Recorder()
    long = request(tokenizer, "a", max_tokens=5000, n=1)
    gen = loop.submit([long], seen.done, seen.tokens, deadline=time.monotonic() + 0.3)
    seen.wait(1)
    last = seen.updates[gen.id][-1]
    assert gen.aborted and gen.timed_out and gen.error is None
    assert last.timed_out and last.completion.finish_reason == "abort" and last.completion.request_id == "a"
    assert not loop.engine.has_work()


def test_aborting_a_waiting_generation_drops_it_and_a_running_one_frees_the_engine(stepping, tokenizer):
    loop, seen = stepping(max_running=1, endless=True), Recorder()
    running = loop.submit([request(tokenizer, "a", max_tokens=5000, n=1)], seen.done, on_admit=seen.admit)
    waiting = loop.submit([request(tokenizer, "b", n=1)], seen.done, on_admit=seen.admit)
    deadline = time.monotonic() + 30
    while not running.seqs:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    loop.abort(waiting)
    assert waiting.aborted and waiting.seqs == [] and seen.events[-1] == ("done", waiting.id)
    loop.abort(running)
    seen.wait(2)
    assert running.aborted and not running.timed_out and not loop.engine.has_work()
    assert ("admit", waiting.id) not in seen.events


def test_close_ends_what_the_loop_holds_and_later_submissions_end_at_once(stepping, tokenizer):
    loop, seen = stepping(max_running=1, endless=True), Recorder()
    gens = [loop.submit([request(tokenizer, name, max_tokens=5000, n=1)], seen.done) for name in "ab"]
    loop.close()
    late = loop.submit([request(tokenizer, "c", n=1)], seen.done)
    assert all(g.aborted and g.error is None for g in [*gens, late])
    assert sorted(e[1] for e in seen.events) == sorted(g.id for g in [*gens, late])
    assert not loop.engine.has_work()
