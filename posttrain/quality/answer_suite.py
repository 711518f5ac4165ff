"""`posttrain inspect` on answer domains: what PATH names (a train config's [[domains]], or one
source such as `reasoning-gym:basic_arithmetic` or a JSONL file), inspected into --out (a
directory, or a URL's working copy) with one line per domain as it finishes."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from posttrain.config import GENERATED_PREFIXES, PATH_PREFIXES, DomainConfig, RunConfig, load_config
from posttrain.console import line_printer
from posttrain.errors import PosttrainError
from posttrain.quality.answer_gate import build_answer_domains, inspect_answer_domains
from posttrain.quality.answer_inspection import AnswerInspectOptions, DomainReport
from posttrain.storage.directory_at_url import output_directory
from posttrain.tasks.answer_sources import is_answer_domain
from posttrain.tasks.domain_patterns import expand_domains

DEFAULT_HELDOUT_CAP = 100  # a bare source's held-out set: a quarter of its items, at most this many


def names_answer_domains(path: str) -> bool:
    """Whether PATH is for the answer inspection: a .toml config, or a source that is not a
    directory of terminal tasks."""
    if path.endswith((".toml", ".jsonl", ".parquet", ".json", ".csv")):
        return True
    answer_prefixes = tuple(p for p in (*GENERATED_PREFIXES, *PATH_PREFIXES) if p not in ("harbor:", "terminal-gen:"))
    return path.startswith(answer_prefixes)


def answer_domain_configs(path: str, heldout: int | None, log) -> tuple[list[DomainConfig], Path]:
    """The answer domains PATH names (patterns expanded) and the folder relative paths start from.
    A bare source's `heldout` None means a quarter of its items, at most 100."""
    if path.endswith(".toml"):
        config = expand_domains(load_config(path), log=log)
        base_dir = Path(path).parent
        others = [d.name for d in config.domains if not is_answer_domain(d)]
        if others:
            log(f"not answer domains, not inspected here (inspect their task directories): {', '.join(others)}")
        configs = [d for d in config.domains if is_answer_domain(d)]
        if heldout is not None:
            configs = [d.model_copy(update={"heldout": heldout}) for d in configs]
        if not configs:
            raise PosttrainError(f"{path}: no answer domain in [[domains]]")
        return configs, base_dir
    if path.endswith(".parquet") and ":" not in path:
        path = f"parquet:{path}"
    elif path.endswith((".json", ".csv")) and ":" not in path:
        path = f"hf-dataset:{path}"
    try:
        bare = DomainConfig(name=_name_of(path), source=path, heldout=heldout if heldout is not None else 0)
    except ValueError as exc:
        raise PosttrainError(f"{path}: not an answer source ({str(exc).splitlines()[-1]})") from None
    expanded = expand_domains(RunConfig(domains=[bare]), log=log).domains
    return expanded, Path.cwd()


def _name_of(source: str) -> str:
    if any(c in source for c in "*?["):
        return "rg"
    if source.startswith(("reasoning-gym:", "scene:")):
        return source.replace(":", "-").removeprefix("reasoning-gym-").replace("*", "all")
    return Path(source.partition(":")[2] if ":" in source else source).stem


def inspect_answers(
    path: str,
    out: str,
    options: AnswerInspectOptions,
    *,
    heldout: int | None,
    policy: str | None,
    samples: int,
    probe_set: int,
    reply_tokens: int,
    console: Console,
) -> dict:
    """Inspect the answer domains PATH names into `out` -> the report (report.json's)."""
    say = line_printer(console)
    configs, base_dir = answer_domain_configs(path, heldout, say)
    domains = build_answer_domains(configs, base_dir)
    if heldout is None and not path.endswith(".toml"):
        domains = [
            (cfg.model_copy(update={"heldout": min(DEFAULT_HELDOUT_CAP, len(src) // 4)}), src)
            if not isinstance(src, str)
            else (cfg, src)
            for cfg, src in domains
        ]

    def on_domain(report: DomainReport) -> None:
        items = f", {len(report.items)} of {report.items_checked} items quarantined" if report.items else ""
        reason = f" ({' '.join(report.reason.split())[:200]})" if report.reason else ""
        console.print(f"{report.id}: {report.verdict}{items}{reason}", highlight=False, soft_wrap=True)

    with output_directory(out, fetch=False, say=say) as directory:
        report, _ = inspect_answer_domains(
            domains,
            directory,
            options,
            source_label=path,
            policy=policy,
            samples=samples,
            probe_set=probe_set,
            reply_tokens=reply_tokens,
            on_domain=on_domain,
        )
    return report
