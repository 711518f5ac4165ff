"""An answer domain's source from its config: reasoning-gym, JSONL, parquet, hf-dataset or
scene, scored by the domain's `verifier` when it names one (python: rewards imported once here,
so a typo fails at start-up). Training (pipeline/build.py) and the quality gate's answer
inspection (quality/answer_inspection.py) both build their sources here."""

from __future__ import annotations

from pathlib import Path

from posttrain.config import TABLE_PREFIXES, DomainConfig
from posttrain.errors import TaskSourceError
from posttrain.tasks.custom_rewards import DEFAULT_REWARD_TIMEOUT_S, PREFIX, check_importable, parse_reward_function
from posttrain.tasks.scene.source import PREFIX as SCENE_PREFIX
from posttrain.tasks.scene.source import SceneSource, parse_difficulties
from posttrain.tasks.sources import JsonlSource, ReasoningGymSource, ScoredBy, TaskSource
from posttrain.tasks.table_sources import TableSource, read_dataset_rows, read_parquet_rows


def is_answer_domain(cfg: DomainConfig) -> bool:
    """One reply per task, judged by a verifier (not a harbor: or terminal-gen: domain)."""
    return cfg.kind == "answer" and not cfg.source.startswith(("harbor:", "terminal-gen:"))


def answer_source(cfg: DomainConfig, base_dir: Path) -> TaskSource:
    """The domain's tasks; `base_dir`: the config file's folder (relative paths, python: modules)."""
    return scored(read_answer_source(cfg, base_dir), cfg, base_dir)


def scored(source: TaskSource, cfg: DomainConfig, base_dir: Path) -> TaskSource:
    """`source` scored by the domain's own verifier(s), when it names any."""
    if not cfg.verifiers():
        return source
    for name, _ in cfg.verifiers():
        if name.startswith(PREFIX):
            try:
                check_importable(parse_reward_function(name, base_dir))
            except TaskSourceError as exc:
                raise TaskSourceError(f"domain {cfg.name!r}: {exc}") from exc
    return ScoredBy(source, cfg.verifiers(), base_dir.resolve(), cfg.reward_timeout_s or DEFAULT_REWARD_TIMEOUT_S)


def read_answer_source(cfg: DomainConfig, base_dir: Path) -> TaskSource:
    if cfg.source.startswith(TABLE_PREFIXES):
        path = cfg.task_path(base_dir)
        parquet = cfg.source.startswith("parquet:")
        rows = read_parquet_rows(path) if parquet else read_dataset_rows(path, cfg.split)
        return TableSource(
            cfg.name,
            path,
            rows,
            cfg.prompt_column,
            cfg.answer_column or ("reward_model.ground_truth" if parquet else "answer"),
            cfg.data_source_column,
            cfg.data_sources,
            cfg.prompt_template,
            cfg.answer_extraction,
        )
    if cfg.source.startswith("reasoning-gym:"):
        return ReasoningGymSource(
            domain=cfg.name,
            generator=cfg.source.removeprefix("reasoning-gym:"),
            seed=cfg.seed,
            size=cfg.size,
            params=cfg.params,
            prompt_template=cfg.prompt_template,
            answer_extraction=cfg.answer_extraction or "answer_tag",
            reward_timeout_s=cfg.reward_timeout_s,
        )
    if cfg.source.startswith(SCENE_PREFIX):
        return SceneSource(
            domain=cfg.name,
            difficulties=parse_difficulties(cfg.source, where=f"domain {cfg.name!r}"),
            seed=cfg.seed,
            size=cfg.size,
            prompt_template=cfg.prompt_template,
        )
    return JsonlSource(cfg.name, cfg.task_path(base_dir), cfg.prompt_template, cfg.answer_extraction)
