"""The compiled decode step (engine/builtin/compiled_step.py), `posttrain serve --compile`: on
tiny models of each family it can take, it gives the eager step's greedy tokens, and it is row
invariant (a sequence alone, in a batch, or after a prefix-cache hit gets the same logprobs to
the bit), so the fast variant's verify steps cannot change the standard variant's output; the
families it cannot take keep the eager step, and a failed compilation falls back to it."""

import copy
import logging

import pytest

from posttrain.engine.builtin import compiled_step, onednn_linear
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model
from posttrain.models.token_ids import chat_prompt_ids
from tests.engine.test_model_families import CONFIGS, save_tiny

pytestmark = pytest.mark.skipif(not onednn_linear.AVAILABLE, reason="the compiled step runs oneDNN's linear op")

QUESTIONS = [
    "Say something long about rivers.",
    "What is two plus two?",
    "List three colours, then three animals, then three cities, each on its own line.",
    "Hi",
]
GREEDY = SamplingParams(temperature=0, max_tokens=12)


@pytest.fixture(scope="module")
def family_dirs(tmp_path_factory, tokenizer):
    directory = tmp_path_factory.mktemp("compiled-families")
    names = ("llama", "qwen2-sliding", "mistral", "qwen3", "gemma")
    return {name: save_tiny(name, CONFIGS[name](), directory, tokenizer) for name in names}


def prompts(tokenizer) -> list[list[int]]:
    return [chat_prompt_ids(tokenizer, [{"role": "user", "content": q}]) for q in QUESTIONS]


def generate(engine: BuiltinEngine, prompt_ids: list[list[int]], tag: str) -> list:
    return engine.generate([GenerationRequest(f"{tag}{i}", p, GREEDY) for i, p in enumerate(prompt_ids)])


# llama: the plain shape; qwen2-sliding: q/k/v biases and a windowed layer; mistral: windows
# everywhere and an untied output head
@pytest.mark.parametrize("name", ["llama", "qwen2-sliding", "mistral"])
def test_the_compiled_step_gives_the_eager_tokens_and_is_row_invariant(family_dirs, tokenizer, name):
    model = load_model(str(family_dirs[name]))
    ids = prompts(tokenizer)
    eager = generate(BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256), ids, "e")
    engine = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256, compile_step=True)
    together = generate(engine, ids, "t")
    assert engine.runner.compiled is not None and engine.runner.compiled.compiled_once
    assert [c.token_ids for c in together] == [c.token_ids for c in eager]
    for compiled, plain in zip(together, eager):
        assert compiled.logprobs == pytest.approx(plain.logprobs, abs=1e-4)
    # one at a time: other row counts in every step, and the prompts' full blocks now come from
    # the prefix cache (a shorter prefill); the same bits
    alone = [generate(engine, [p], f"a{i}-")[0] for i, p in enumerate(ids)]
    assert engine.prefix_hit_rate > 0
    assert [c.token_ids for c in alone] == [c.token_ids for c in together]
    assert [c.logprobs for c in alone] == [c.logprobs for c in together]


def test_the_fast_variants_drafts_do_not_change_the_compiled_output(family_dirs, tokenizer):
    """Speculation verifies drafts in steps of several rows per sequence: with the compiled
    step, the tokens and logprobs are the plain compiled engine's."""
    model = load_model(str(family_dirs["llama"]))
    # a prompt that repeats itself, so n-gram drafts are made and some accepted
    ids = [p + p[-30:] * 3 for p in prompts(tokenizer)]
    params = SamplingParams(temperature=0, max_tokens=24)
    requests = [GenerationRequest(str(i), p, params) for i, p in enumerate(ids)]
    standard = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256, compile_step=True)
    fast = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256, compile_step=True, speculative=True)
    plain, speculated = standard.generate(requests), fast.generate(requests)
    assert fast.stats.draft_tokens > 0 and fast.runner.compiled is not None
    assert [c.token_ids for c in speculated] == [c.token_ids for c in plain]
    assert [c.logprobs for c in speculated] == [c.logprobs for c in plain]


@pytest.mark.parametrize(("name", "reason"), [("qwen3", "per-head q/k norms"), ("gemma", "norm is not")])
def test_families_it_cannot_take_keep_the_eager_step(family_dirs, tokenizer, name, reason, caplog):
    model = load_model(str(family_dirs[name]))
    with caplog.at_level(logging.WARNING):
        engine = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256, compile_step=True)
    assert engine.runner.compiled is None
    assert reason in caplog.text and "runs eagerly" in caplog.text
    eager = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256)
    ids = prompts(tokenizer)[:2]
    assert [c.logprobs for c in generate(engine, ids, "c")] == [c.logprobs for c in generate(eager, ids, "e")]


def test_a_failed_compilation_falls_back_to_the_eager_step(family_dirs, tokenizer, monkeypatch, caplog):
    model = load_model(str(family_dirs["llama"]))

    def broken(*shape):
        def refuse(*args):
            raise RuntimeError("inductor could not build this graph")

        return refuse

    monkeypatch.setattr(compiled_step, "compiled_stack", broken)
    engine = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256, compile_step=True)
    with caplog.at_level(logging.WARNING):
        fallen_back = generate(engine, prompts(tokenizer)[:2], "f")
    assert engine.runner.compiled is None and "inductor could not build this graph" in caplog.text
    eager = generate(BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256), prompts(tokenizer)[:2], "e")
    assert [c.logprobs for c in fallen_back] == [c.logprobs for c in eager]  # the eager step's bits
