"""A training run's directory and its resolved config: checked, then created fresh or opened
for --resume.

Nothing is written until everything that can be checked without loading a model has passed
(`open_run`, then the domains: posttrain.pipeline.build.build_sources). A start that fails
after that leaves only the pre-start files (config.toml, the quality gate's inspection): such a
directory is not a run yet, and the next start replaces it instead of asking for --resume.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from posttrain.config import RunConfig, config_relative_path, dump_config, load_config, parse_config
from posttrain.errors import ModelLoadError, PosttrainError
from posttrain.models.spec import local_model_dir
from posttrain.pipeline.run_dir import RunDir
from posttrain.storage.atomic import write_text_atomic
from posttrain.tasks.domain_patterns import expand_domains

PRE_START = ("config.toml", "quality")  # what a start writes before its first step or evaluation


@dataclass
class TrainingRun:
    config: RunConfig
    run_dir: RunDir
    config_dir: Path
    resume: bool = False
    notes: list[str] = field(default_factory=list)  # what the start left out and why (pattern domains)
    strict: bool = False  # --strict: what would be left out with a line (a generator, a gated item) is an error

    @property
    def replaces_failed_start(self) -> bool:
        return not self.resume and self.run_dir.root.is_dir() and any(self.run_dir.root.iterdir())


def open_run(
    config_path: Path | None,
    out: Path,
    resume: bool,
    world_size: int | None = None,
    storage_url: str | None = None,
    strict: bool = False,
) -> TrainingRun:
    """The run's config, checked (the file, its keys and values, the model's directory) and the
    output directory checked (new, a failed start, or, with `resume`, a run). Writes nothing.
    `world_size` (--nproc) replaces [train] world_size, for this session of a resumed run too;
    `storage_url` (--out URL; `out` is then its working copy) sets [storage] url. A new run's
    pattern domains (`reasoning-gym:*`) are expanded here; a generator that does not load is a
    note (an error with `strict`)."""
    run_dir = RunDir(out)
    if resume:
        if not run_dir.config.is_file():
            raise PosttrainError(f"{out}: not a run directory (no config.toml) — nothing to resume")
        config = with_world_size(load_config(run_dir.config), world_size, run_dir.config)
        config = with_storage_url(config, storage_url, run_dir.config)
        source_dir = Path(config_path).parent if config_path else Path.cwd()
        return TrainingRun(config, run_dir, source_dir, resume=True, strict=strict)
    if config_path is None:
        raise PosttrainError("give a config file: posttrain train CONFIG --out RUN_DIR")
    config = with_world_size(load_config(config_path), world_size, config_path)
    config = with_storage_url(config, storage_url, config_path)
    notes: list[str] = []
    config = expand_domains(config, strict=strict, log=notes.append)
    local_model_dir(config.model.name)
    if out.exists() and not out.is_dir():
        raise PosttrainError(f"{out}: exists and is not a directory")
    if out.is_dir() and not is_failed_start(out):
        raise PosttrainError(f"{out}: run directory is not empty; use --resume to continue it or choose another --out")
    # Task and transcript files are resolved against the config's folder; keep them absolute in
    # the copy, which a resumed run reads from elsewhere.
    for domain in config.domains:
        domain.source = domain.absolute_source(Path(config_path).parent)
        if domain.heldout_handwritten is not None:
            domain.heldout_handwritten = str(
                config_relative_path(domain.heldout_handwritten, Path(config_path).parent).resolve()
            )
    if config.sft is not None:
        base = Path(config_path).parent
        config.sft.data = [str(config_relative_path(p, base).resolve()) for p in config.sft.data]
        config.sft.chat_data = [str(config_relative_path(p, base).resolve()) for p in config.sft.chat_data]
    return TrainingRun(config, run_dir, Path(config_path).parent, notes=notes, strict=strict)


def with_world_size(config: RunConfig, world_size: int | None, path: Path) -> RunConfig:
    """`config` with [train] world_size set to `world_size` (None: as it is), checked again."""
    if world_size is None:
        return config
    data = config.model_dump(mode="json", exclude_none=True, by_alias=True)
    data["train"]["world_size"] = world_size
    return parse_config(data, f"{path} (with --nproc {world_size})")


def with_storage_url(config: RunConfig, url: str | None, path: Path) -> RunConfig:
    """`config` publishing to `url` (--out URL); a different [storage] url is refused."""
    if url is None or (config.storage.url or "").rstrip("/") == url.rstrip("/"):
        return config
    if config.storage.url:
        raise PosttrainError(f"{path}: [storage] url = {config.storage.url!r}, but --out is {url}; give only one")
    return config.model_copy(update={"storage": config.storage.model_copy(update={"url": url})})


def is_failed_start(out: Path) -> bool:
    """True when `out` holds nothing but what a start writes before it trains or evaluates
    (an empty directory included): no step, checkpoint, evaluation or log to lose."""
    return all(entry.name in PRE_START for entry in out.iterdir())


def start_run(run: TrainingRun) -> None:
    """Create a fresh run's directory (clearing a failed start's leftovers) and write its
    resolved config. A resumed run is left as it is."""
    if run.resume:
        return
    root = run.run_dir.root
    for name in PRE_START:
        leftover = root / name
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink(missing_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run.run_dir.config, dump_config(run.config))


def prepare_run(config_path: Path | None, out: Path, resume: bool) -> TrainingRun:
    run = open_run(config_path, out, resume)
    start_run(run)
    return run


def set_torch_threads_and_seed(config: RunConfig) -> None:
    import torch

    if config.threads:
        torch.set_num_threads(config.threads)
    elif config.mode == "async":
        # The engine and the trainer compute at once, each on torch's intra-op pool: with a pool
        # of every core each, they oversubscribe the CPU and both slow down several times over.
        torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))
    torch.manual_seed(config.seed)


@dataclass
class CheckedRun:
    """A run whose config, model directory, output directory and domains have all been checked;
    nothing is written yet (`start_run` does that)."""

    run: TrainingRun
    sources: dict
    mixture: object  # the DomainMixture, before any quality gate
    rl: bool = True  # False for `posttrain sft`, which runs the warm start alone

    def warnings(self) -> list[str]:
        """What loads but is probably a mistake: task.toml keys Harbor would ignore, and RL
        settings under which no step can update the policy."""
        from posttrain.pipeline.learning_signal import cannot_learn
        from posttrain.tasks.harbor import unknown_key_warnings

        found = [w for source in self.sources.values() for w in unknown_key_warnings(getattr(source, "tasks", []))]
        return self.run.notes + found + (cannot_learn(self.run.config) if self.rl else [])

    def gated(self, log) -> object:
        """The mixture training uses: with a quarantine or the quality gate, rebuilt from the
        same sources less the quarantined tasks and the dropped answer domains (the gate writes
        into RUN_DIR/quality)."""
        from posttrain.pipeline.build import build_mixture

        config = self.run.config
        if not (config.quarantine or config.quality_gate):
            return self.mixture
        quality = self.run.run_dir.root / "quality"
        return build_mixture(
            config, self.run.config_dir, quality_dir=quality, log=log, sources=self.sources, strict=self.run.strict
        )


def check_run(
    config_path: Path | None,
    out: Path,
    resume: bool,
    needs_sft: bool = False,
    world_size: int | None = None,
    storage_url: str | None = None,
    strict: bool = False,
) -> CheckedRun:
    """Everything `posttrain train` (or `posttrain sft`: `needs_sft`) can check before it loads a
    model: the config, the model's directory, the output directory and every domain's tasks.
    Fast, and writes nothing. `world_size`: --nproc; `storage_url`: --out URL."""
    from posttrain.pipeline.build import build_mixture, build_sources
    from posttrain.pipeline.context_fit import check_context_fits, model_kv_shape, model_positions

    run = open_run(config_path, out, resume, world_size, storage_url, strict)
    if run.config.storage.url:
        from posttrain.storage.artifact_store import ArtifactStore

        ArtifactStore(run.config.storage.url)  # an unknown protocol, or its package missing, fails here
    if needs_sft and run.config.sft is None:
        raise PosttrainError(f"{config_path or run.run_dir.config}: no [sft] table; posttrain sft needs one")
    if run.config.engine.backend == "builtin":
        check_builtin_family(run.config.model.name)
    if run.config.engine.backend == "vllm":
        from posttrain.engine.vllm_install import require_vllm

        require_vllm("[engine] backend")
    check_context_fits(run.config, model_positions(run.config.model.name), model_kv_shape(run.config.model.name))
    if run.config.train.device == "cuda":  # a GPU asked for by name must be here (torch loads only then)
        from posttrain.train.device import resolve_device

        resolve_device(run.config.train.device, run.config.engine.backend)
    sources = build_sources(run.config, run.config_dir)
    mixture = build_mixture(run.config, run.config_dir, sources=sources, gate=False)
    if run.config.sft is not None:
        run.notes += check_sft_data(run.config, run.config_dir, strict=strict)
    return CheckedRun(run, sources, mixture, rl=not needs_sft)


def check_builtin_family(model: str) -> None:
    """The builtin engine computes only the families it implements: refuse another model_type
    from its config.json, before a run directory is written or any weight is loaded."""
    import json
    from types import SimpleNamespace

    from posttrain.engine.builtin.model_families import check_supported
    from posttrain.models.spec import adapter_base_model, is_adapter_dir, local_model_dir

    directory = local_model_dir(model)
    while directory is not None and is_adapter_dir(directory):
        directory = local_model_dir(adapter_base_model(directory))
    if directory is not None:  # config.json read as it is: transformers (and torch) load later
        try:
            config = json.loads((directory / "config.json").read_text())
        except json.JSONDecodeError as exc:
            raise ModelLoadError(f"{directory / 'config.json'}: not valid JSON ({exc.msg})") from exc
        check_supported(SimpleNamespace(**config))


def check_sft_data(config: RunConfig, config_dir: Path, strict: bool = False) -> list[str]:
    """[sft]: every transcript and chat data file reads, and there is something to train on.
    Returns one line per bad chat data row, left out (with `strict`: an error)."""
    from posttrain.pipeline.sft.conversations import read_conversation_rows
    from posttrain.pipeline.sft.transcripts import read_transcripts

    extra = [t for p in config.sft.data for t in read_transcripts(config_relative_path(p, config_dir))]
    paths = [config_relative_path(p, config_dir) for p in config.sft.chat_data]
    chats, problems = read_conversation_rows(paths, strict=strict)
    if config.sft.demonstrations == 0 and not extra and not chats:
        raise PosttrainError(
            "[sft]: no data: demonstrations = 0 and no data files or chat_data rows "
            "(set demonstrations, data or chat_data)" + "".join(f"\n{p}" for p in problems[:20])
        )
    return [f"[sft] chat_data: skipping {p}" for p in problems]


def out_state(run: TrainingRun) -> str:
    """Where the run goes, in words, for the plan and the first log line."""
    root = run.run_dir.root
    if run.resume:
        return f"{root} (resumed)"
    if run.replaces_failed_start:
        return f"{root} (replaces a start that failed before training)"
    return f"{root} (new)"
