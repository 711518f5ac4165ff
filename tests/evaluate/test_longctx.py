import pytest

from posttrain.agent.policies import NopPolicy, OraclePolicy
from posttrain.evaluate.longctx import KINDS, LongContextSpecError, generate_tasks, parse_spec
from posttrain.evaluate.runner import run_eval
from posttrain.tasks.verifiers import score


def tokens(tokenizer, text):
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_specs():
    spec = parse_spec("longctx:all:1k,32k:3:7")
    assert spec.kinds == KINDS and spec.lengths == (1000, 32000) and spec.count == 3 and spec.seed == 7
    assert parse_spec("longctx:multihop:1m").lengths == (1_000_000,)
    for bad, message in (
        ("longctx:all", "expected"),
        ("longctx:needle:1k", "unknown kind"),
        ("longctx:all:2m", "from 1k to 1m"),
        ("longctx:all:lots", "not like"),
    ):
        with pytest.raises(LongContextSpecError, match=message):
            parse_spec(bad)


def test_tasks_have_their_length_in_model_tokens_and_are_reproducible(tokenizer):
    tasks = generate_tasks("longctx:all:1k,16k:2", tokenizer)
    assert len(tasks) == 4 * 2 * 2 and len({t.id for t in tasks}) == len(tasks)
    for task in tasks:
        length = task.metadata["length_tokens"]
        assert abs(tokens(tokenizer, task.instruction) - length) <= max(20, length * 0.02), task.id
        assert score(str(task.answer), task).passed and not score("", task).passed
    again = generate_tasks("longctx:all:1k,16k:2", tokenizer)
    assert [t.instruction for t in again] == [t.instruction for t in tasks]
    assert generate_tasks("longctx:all:1k:2:1", tokenizer)[0].instruction != tasks[0].instruction  # the seed


def test_answers_are_what_the_documents_say(tokenizer):
    by_kind = {t.metadata["category"]: t for t in generate_tasks("longctx:all:2k:1:5", tokenizer)}
    words = by_kind["aggregation"].instruction.split("\n\n")[0].split()
    ranked = sorted(set(words), key=words.count, reverse=True)
    assert ", ".join(ranked[:3]) == by_kind["aggregation"].answer
    assert words.count(ranked[2]) > words.count(ranked[3])  # no tie at the cut
    retrieval = by_kind["retrieval"]
    for code in retrieval.answer.split(", "):
        assert f"is {code}." in retrieval.instruction
    consistency = by_kind["consistency"]
    assert consistency.answer == "not present" or consistency.answer in consistency.instruction.splitlines()


@pytest.mark.slow
def test_a_million_tokens(tokenizer):
    task = generate_tasks("longctx:multihop:1m", tokenizer)[0]
    assert abs(tokens(tokenizer, task.instruction) - 1_000_000) <= 20_000


def test_oracle_and_nop_on_the_suite(tokenizer, tmp_path):
    tasks = generate_tasks("longctx:all:1k:2", tokenizer)
    oracle = run_eval(tasks, "oracle", OraclePolicy(), tokenizer, tmp_path / "oracle")
    nop = run_eval(tasks, "nop", NopPolicy(), tokenizer, tmp_path / "nop")
    assert oracle["pass_at_1"] == 1.0 and nop["pass_at_1"] == 0.0
    assert set(oracle["pass_rate_by_category"]) == set(KINDS)


def test_a_model_that_cannot_fit_the_prompt_is_a_context_overflow(tokenizer, tiny_model, tmp_path):
    from posttrain.engine.builtin.engine import BuiltinEngine
    from posttrain.engine.interface import SamplingParams

    engine = BuiltinEngine(tiny_model, tokenizer)
    tasks = generate_tasks("longctx:retrieval:1k,4k:1", tokenizer)
    summary = run_eval(
        tasks,
        "model",
        None,
        tokenizer,
        tmp_path / "model",
        engine=engine,
        params=SamplingParams(temperature=0.0, max_tokens=8),
        max_context_tokens=2048,
    )
    assert summary["failure_modes"].get("context_overflow") == 1  # the 4k task, on a 2k-token model
    assert summary["tokens"]["out"] > 0  # the 1k task ran
