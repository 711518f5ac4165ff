"""The signal check for answer domains: k replies of the starting model to each item of a
probe set, scored by the domain's verifier. A domain the model always fails or always passes
gives GRPO no gradient at the start (every advantage in every group is zero)."""

from __future__ import annotations

from dataclasses import replace

from posttrain.quality.answer_inspection import DomainReport
from posttrain.quality.verdicts import FAIL, PASS, SKIP, Check
from posttrain.tasks.records import Task
from posttrain.tasks.verifiers import score


def answer_pass_rates(
    probe_sets: dict[str, list[Task]],
    model_spec: str,
    samples: int,
    *,
    reply_tokens: int = 256,
    temperature: float = 1.0,
    seed: int = 0,
) -> dict[str, tuple[int, int]]:
    """domain -> (replies passed, replies scored), `samples` replies per probe item."""
    from posttrain.engine.factory import engine_for_spec
    from posttrain.engine.interface import GenerationRequest, SamplingParams
    from posttrain.models.token_ids import chat_prompt_ids

    items = [(name, task) for name, tasks in probe_sets.items() for task in tasks]
    if not items:
        return {}
    engine, tokenizer, limit = engine_for_spec(model_spec)
    params = SamplingParams(temperature=temperature, max_tokens=reply_tokens)
    requests, owners = [], []
    for number, (name, task) in enumerate(items):
        prompt = chat_prompt_ids(tokenizer, task.messages())
        if limit and len(prompt) + reply_tokens > limit:
            continue  # does not fit the model's context: not probed
        for sample in range(samples):
            request_seed = seed * 1_000_003 + number * samples + sample
            sampled = replace(params, seed=request_seed)
            requests.append(GenerationRequest(f"{task.id}:{sample}", prompt, sampled, task.messages()))
            owners.append((name, task))
    rates = {name: (0, 0) for name in probe_sets}
    for (name, task), completion in zip(owners, engine.generate(requests) if requests else []):
        passed, total = rates[name]
        rates[name] = (passed + bool(score(completion.text, task).passed), total + 1)
    return rates


def apply_answer_signal(reports: list[DomainReport], rates: dict[str, tuple[int, int]]) -> None:
    """Add the signal check to each domain probed, and re-decide its verdict."""
    for report in reports:
        if report.id not in rates:
            continue
        passed, total = rates[report.id]
        evidence = {"passed": passed, "samples": total}
        if not total:
            summary = "no probe item fits the model's context"
            report.checks.append(Check("signal", "signal", SKIP, summary, None, evidence))
            continue
        report.pass_rate = passed / total
        if report.pass_rate in (0.0, 1.0):
            too = "too hard" if passed == 0 else "too easy"
            summary = f"the starting model passes {passed} of {total} replies: {too} for it now"
            report.checks.append(Check("signal", "signal", FAIL, summary, "no_signal", evidence))
        else:
            summary = f"the starting model passes {passed} of {total} replies"
            report.checks.append(Check("signal", "signal", PASS, summary, None, evidence))
        report.decide()
