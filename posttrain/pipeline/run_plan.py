"""`posttrain train CONFIG --check`: what a run would do, resolved from its config and its
domains as built, without loading a model or writing a file."""

from __future__ import annotations

from posttrain.config import RunConfig
from posttrain.pipeline.learning_signal import cannot_learn
from posttrain.tasks.answer_sources import is_answer_domain
from posttrain.tasks.domains import DomainMixture


def run_plan(config: RunConfig, mixture: DomainMixture, out_state: str) -> dict:
    """The resolved plan: domains with their sizes and shares, the step budget, the samples it
    draws, the stages, and notes on settings that have no effect as configured."""
    total_weight = sum(d.weight for d in mixture.domains.values())
    steps, prompts, group = config.train.steps, config.rollout.prompts_per_step, config.rollout.group_size
    domains = []
    for cfg in config.domains:
        domain = mixture.domains[cfg.name]
        share = domain.weight / total_weight
        domains.append(
            {
                "name": cfg.name,
                "source": cfg.source,
                "kind": cfg.kind,
                "items": len(domain.source),
                "heldout": len(domain.heldout),
                "training_pool": domain.training_size,
                "weight": cfg.weight,
                "share": round(share, 4),
                "expected_prompts": round(share * prompts * steps, 1),
            }
        )
    return {
        "out": out_state,
        "model": config.model.name,
        "dtype": config.model.dtype,
        "engine": config.engine.backend,
        "mode": config.mode,
        "domains": domains,
        "sft": _sft_plan(config),
        "rl": {
            "steps": steps,
            "prompts_per_step": prompts,
            "group_size": group,
            "samples_per_step": prompts * group,
            "samples_total": prompts * group * steps,
            "advantage": config.algorithm.advantage,
            "loss": config.algorithm.loss,
            "lr": config.optim.lr,
            "checkpoint_every": config.train.checkpoint_every,
            "cannot_learn": cannot_learn(config),  # also printed as warnings
        },
        "heldout_evaluations": {
            "items": sum(len(d.heldout) for d in mixture.domains.values()),
            "when": ["before", "after"]
            + ([f"every {config.train.eval_every} steps"] if config.train.eval_every else []),
        },
        "mixture": {
            "policy": config.mixture.policy,
            "floor": config.mixture.floor,
            "phase_steps": mixture.phase_steps,
        },
        "monitor": config.monitor.model_dump() if config.monitor.every or config.monitor.conflict_every else None,
        "quality_gate": _gate_plan(config),
        "notes": settings_without_effect(config),
    }


def _sft_plan(config: RunConfig) -> dict | None:
    sft = config.sft
    if sft is None:
        return None
    return {
        "demonstrations": sft.demonstrations,
        "data": sft.data,
        "chat_data": sft.chat_data,
        "epochs": sft.epochs,
        "batch_size": sft.batch_size,
        "batch_tokens": sft.batch_tokens,
        "rejection_rounds": sft.rejection_rounds,
        "rejection_episodes_per_round": sft.rejection_tasks * sft.rejection_samples,
        "evaluate": sft.evaluate,
    }


def _gate_plan(config: RunConfig) -> str | None:
    terminal = [d.name for d in config.domains if d.kind == "terminal" and d.source.startswith("harbor:")]
    answer = [d.name for d in config.domains if is_answer_domain(d)]
    parts = []
    if config.quarantine:
        parts.append(f"skips the tasks listed in {config.quarantine}")
    elif config.quality_gate and terminal:
        parts.append(f"inspects the tasks of {', '.join(terminal)} at the start (into OUT/quality), skips the bad ones")
    if config.quality_gate and answer:
        parts.append(
            f"inspects the {len(answer)} answer domains at the start (into OUT/quality/answers), drops the hackable "
            "or empty ones and leaves out bad items"
        )
    return "; ".join(parts) or None


def settings_without_effect(config: RunConfig) -> list[str]:
    """Settings the config sets explicitly that the chosen backend or mode ignores."""
    notes = []
    engine_set, backend = config.engine.model_fields_set, config.engine.backend
    for owner, keys in (
        ("builtin", {"num_blocks", "block_size", "max_num_seqs", "max_num_batched_tokens"}),
        ("hf", {"max_batch_size"}),
        ("vllm", {"max_model_len", "gpu_memory_utilization"}),
    ):
        ignored = sorted(engine_set & keys)
        if backend != owner and ignored:
            notes.append(
                f"[engine] {', '.join(ignored)}: used by the {owner} backend only; the {backend} backend ignores "
                + ("them" if len(ignored) > 1 else "it")
            )
    if config.mode == "sync" and "async" in config.model_fields_set:
        notes.append('[async] settings apply only with mode = "async"')
    if config.quality_gate and not any(d.source.startswith("harbor:") or is_answer_domain(d) for d in config.domains):
        notes.append("quality_gate inspects harbor: and answer domains only; this config has none")
    return notes


def plan_lines(plan: dict) -> list[str]:
    """The plan as a few lines for a terminal."""
    rl, policy = plan["rl"], plan["mixture"]["policy"]
    lines = [
        f"run directory: {plan['out']}",
        f"model {plan['model']} ({plan['dtype']}) on the {plan['engine']} engine, {plan['mode']} mode",
    ]
    for d in plan["domains"]:
        lines.append(
            f"  domain {d['name']} ({d['source']}, {d['kind']}): {d['items']} items, {d['heldout']} held out, "
            f"{d['training_pool']} to train on; weight {d['weight']:g}"
            + (f" ({d['share']:.0%} of prompts, ~{d['expected_prompts']:g} prompts)" if policy == "static" else "")
        )
    if plan["sft"]:
        sft = plan["sft"]
        rejection = (
            f"{sft['rejection_rounds']} rejection rounds of {sft['rejection_episodes_per_round']} episodes"
            if sft["rejection_rounds"]
            else "no rejection rounds"
        )
        lines.append(
            f"sft: {sft['demonstrations']} demonstrations"
            + (f" and {len(sft['chat_data'])} chat data file(s)" if sft["chat_data"] else "")
            + f", {sft['epochs']} epochs of "
            + (f"{sft['batch_tokens']}-token batches, " if sft["batch_tokens"] else f"batch {sft['batch_size']}, ")
            + rejection
        )
    if rl:
        lines.append(
            f"rl: {rl['steps']} steps x {rl['prompts_per_step']} prompts x {rl['group_size']} samples = "
            f"{rl['samples_total']} samples ({rl['advantage']}, {rl['loss']}, lr {rl['lr']:g})"
        )
    evals = plan["heldout_evaluations"]
    lines.append(f"held-out evaluation: {evals['items']} items, {', '.join(evals['when'])}")
    policy = plan["mixture"]["policy"]
    if policy == "sequential":
        lines.append(f"mixture: sequential, one domain at a time for {plan['mixture']['phase_steps']} steps each")
    elif policy != "static":
        lines.append(f"mixture: {policy}, adapted each step (every domain at least {plan['mixture']['floor']:.0%})")
    monitor = plan["monitor"]
    if monitor and monitor["every"]:
        lines.append(
            f"monitor: every {monitor['every']} steps on {monitor['items']} held-out items per domain, "
            f"reaction {monitor['reaction']}"
        )
    if monitor and monitor["conflict_every"]:
        lines.append(f"gradient conflicts: every {monitor['conflict_every']} steps, into conflicts.jsonl")
    if plan["quality_gate"]:
        lines.append(f"quality gate: {plan['quality_gate']}")
    lines += [f"note: {note}" for note in plan["notes"]]
    return lines
