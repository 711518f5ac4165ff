"""Config -> live objects: domains and the policy's two model copies. Kept apart so eval and
train share it (the engine over them: posttrain.engine.factory.build_engine)."""

from __future__ import annotations

from pathlib import Path

from posttrain.config import DomainConfig, RunConfig, config_relative_path
from posttrain.errors import PosttrainError
from posttrain.pipeline.heldout_sets import extra_heldout, tagged, training_source
from posttrain.tasks.answer_sources import answer_source, is_answer_domain, scored
from posttrain.tasks.domains import Domain, DomainMixture
from posttrain.tasks.sources import HarborSource, TaskSource


def build_source(cfg: DomainConfig, base_dir: Path) -> TaskSource:
    if cfg.terminal_gen_families() is not None:
        return scored(training_source(cfg), cfg, base_dir)
    if cfg.source.startswith("harbor:"):
        return scored(HarborSource(cfg.name, cfg.task_path(base_dir), cfg.tags, cfg.names), cfg, base_dir)
    return answer_source(cfg, base_dir)


def build_sources(config: RunConfig, base_dir: Path) -> dict[str, TaskSource]:
    """Every domain's source, loaded: a missing file, a bad line, an unknown generator or a
    task directory that does not load raises here, before a run writes anything."""
    return {d.name: build_source(d, base_dir) for d in config.domains}


def build_mixture(
    config: RunConfig,
    base_dir: Path,
    quality_dir: Path | None = None,
    log=print,
    sources: dict[str, TaskSource] | None = None,
    gate: bool = True,
    strict: bool = False,
) -> DomainMixture:
    """The domains, each from its source (`sources`: already built); with `gate`, terminal
    domains lose the tasks the quality gate quarantined (config.quarantine, or an inspection
    into `quality_dir` with quality_gate), and with quality_gate the answer domains are
    inspected too (into `quality_dir`/answers): a dropped domain is left out of the run, a kept
    one loses its quarantined items, each named in one line (an error with `strict`)."""
    sources = dict(sources) if sources is not None else build_sources(config, base_dir)
    quality_dir = quality_dir or base_dir / "quality"
    if gate and (config.quarantine or config.quality_gate):
        gate_terminal_sources(config, sources, base_dir, quality_dir, log)
    if gate and config.quality_gate:
        from posttrain.quality.answer_gate import gate_answer_sources

        answer = [d for d in config.domains if is_answer_domain(d)]
        sources = gate_answer_sources(answer, sources, quality_dir / "answers", strict=strict, log=log)
    domains = []
    for d in config.domains:
        if d.name not in sources:  # dropped by the quality gate
            continue
        domain = Domain(
            name=d.name,
            source=sources[d.name],
            weight=d.weight,
            heldout_size=d.heldout,
            seed=d.seed,
            extra_heldout=extra_heldout(d, base_dir),
        )
        if d.terminal_gen_families() is not None:  # the held-out protocol's first set
            tagged([t for t in domain.heldout if "heldout_set" not in t.metadata], "instances")
        domains.append(domain)
    return DomainMixture(
        domains,
        seed=config.seed,
        curriculum=config.curriculum,
        mixture=config.mixture,
        monitor=config.monitor,
        total_steps=config.train.steps,
    )


def gate_terminal_sources(config: RunConfig, sources: dict, base_dir: Path, quality_dir: Path, log) -> None:
    from posttrain.quality.gate import gate

    for cfg in config.domains:
        source = sources[cfg.name]
        if not isinstance(source, HarborSource):
            continue
        earlier = quality_dir / cfg.name / "quarantine.txt"
        if config.quarantine:
            kept = gate(source.tasks, config_relative_path(config.quarantine, base_dir), log=log)
        elif earlier.is_file():  # a resumed run keeps the task set its first inspection chose
            kept = gate(source.tasks, earlier, log=log)
        else:
            kept = gate(source.tasks, inspect_source=source.root, inspect_out=quality_dir / cfg.name, log=log)
        if not kept:
            raise PosttrainError(f"domain {cfg.name!r}: every task is quarantined; nothing left to train on")
        source.tasks = [t for t in source.tasks if t.id in {k.id for k in kept}]


def load_policy_pair(config: RunConfig, weights_from: Path | None = None):
    """The trainer's model and an identical, separate copy for the engine (weights are synced
    into it after each step, as they would be into a remote engine). With the builtin engine
    the trainer's model runs the engine's attention and linear kernels, so the logprobs it
    recomputes equal the engine's to the bit (fp32, with the fp32 KV cache; with [engine]
    kv_cache_dtype = "int8" they differ a little, reported as logprob_mismatch_max)."""
    from posttrain.models.loading import load_model

    warn_if_bf16_is_emulated(config)
    if config.model.lora is not None:
        return _load_lora_policy_pair(config, weights_from)
    spec = policy_spec(config, weights_from)
    trainer_model = load_trainer_model(spec, config.seed, config.engine.backend)
    engine_model = load_model(spec, config.model.dtype, seed=config.seed)
    return trainer_model, engine_model


def _load_lora_policy_pair(config: RunConfig, weights_from: Path | None):
    """With [model] lora: the trainer's model is the base with adapters (fresh, or a checkpoint's
    when `weights_from` holds adapters); the engine's is the base with them merged."""
    import torch

    from posttrain.engine.builtin.engine_kernels import use_engine_kernels
    from posttrain.models.loading import is_adapter_dir, load_model
    from posttrain.models.spec import local_model_dir
    from posttrain.train.lora import load_lora, merged_lora_weights, with_lora

    adapters = weights_from if weights_from is not None and is_adapter_dir(weights_from) else None
    base_spec = str(weights_from) if weights_from is not None and adapters is None else config.model.name
    base = load_model(base_spec, "float32", seed=config.seed)
    if config.engine.backend == "builtin":
        use_engine_kernels(base)
    if adapters is not None:
        trainer_model = load_lora(base, adapters)
    else:
        directory = local_model_dir(base_spec)
        trainer_model = with_lora(base, config.model.lora, str(directory.resolve()) if directory else base_spec)
    engine_model = load_model(base_spec, config.model.dtype, seed=config.seed)
    params = dict(engine_model.named_parameters())
    with torch.no_grad():
        for name, tensor in merged_lora_weights(trainer_model):
            params[name].copy_(tensor)
    return trainer_model, engine_model


def policy_spec(config: RunConfig, weights_from: Path | None) -> str:
    return str(weights_from) if weights_from else config.model.name


def load_trainer_model(spec: str, seed: int, engine_backend: str):
    """The trainer's copy of the policy (fp32; on the builtin engine's kernels when that engine
    serves the rollouts). Module-level so a partial of it reaches other trainer ranks."""
    from posttrain.engine.builtin.engine_kernels import use_engine_kernels
    from posttrain.models.loading import load_model

    model = load_model(spec, "float32", seed=seed)
    return use_engine_kernels(model) if engine_backend == "builtin" else model


def warn_if_bf16_is_emulated(config: RunConfig) -> None:
    """bf16 settings are the user's choice, but on a CPU that emulates bf16 (AVX2-only) they
    make every step hundreds of times slower: say so before the run starts. The trainer's
    autocast runs on its device: on CUDA, the CPU's bf16 does not matter to it."""
    from rich.markup import escape

    from posttrain import cpu
    from posttrain.console import console
    from posttrain.train.device import resolve_device

    trainer_on_cpu = resolve_device(config.train.device, config.engine.backend).type == "cpu"
    for what, wanted in (
        ("[optim] bf16_autocast", config.optim.bf16_autocast and trainer_on_cpu),
        ("[sft] bf16_autocast", config.sft is not None and config.sft.bf16_autocast is True and trainer_on_cpu),
        ('[model] dtype = "bfloat16"', config.model.dtype == "bfloat16"),
    ):
        message = cpu.slow_bf16_warning(what) if wanted else None
        if message:
            console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True)
