"""A training run's directory and its resolved config: created fresh, or opened for --resume."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch

from posttrain.config import RunConfig, dump_config, load_config
from posttrain.errors import PosttrainError
from posttrain.pipeline.run_dir import RunDir
from posttrain.storage.atomic import write_text_atomic


@dataclass
class TrainingRun:
    config: RunConfig
    run_dir: RunDir
    config_dir: Path


def prepare_run(config_path: Path | None, out: Path, resume: bool) -> TrainingRun:
    run_dir = RunDir(out)
    if resume:
        if not run_dir.config.is_file():
            raise PosttrainError(f"{out}: not a run directory (no config.toml) — nothing to resume")
        config = load_config(run_dir.config)
        source_dir = Path(config_path).parent if config_path else Path.cwd()
        return TrainingRun(config, run_dir, source_dir)
    if config_path is None:
        raise PosttrainError("give a config file: posttrain train CONFIG --out RUN_DIR")
    config = load_config(config_path)
    if out.exists() and any(out.iterdir()):
        raise PosttrainError(f"{out}: run directory is not empty; use --resume to continue it or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    # Task files are resolved against the config's folder; keep it absolute in the copy.
    for domain in config.domains:
        domain.source = domain.absolute_source(Path(config_path).parent)
    write_text_atomic(run_dir.config, dump_config(config))
    return TrainingRun(config, run_dir, Path(config_path).parent)


def set_torch_threads_and_seed(config: RunConfig) -> None:
    if config.threads:
        torch.set_num_threads(config.threads)
    elif config.mode == "async":
        # The engine and the trainer compute at once, each on torch's intra-op pool: with a pool
        # of every core each, they oversubscribe the CPU and both slow down several times over.
        torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))
    torch.manual_seed(config.seed)
