"""The rollout side for the hf and vllm engines, whose generate() is one batch call that cannot
serve concurrent workers: each step's groups are generated in the driver's thread, in one call
for the answer tasks and one batch of episodes for the terminal tasks. After each step the
trainer's weights go into the engine (vllm: reloaded in place, its prefix cache cleared), and
the next step's tokens carry the new version."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace

import torch

from posttrain.config import RunConfig
from posttrain.engine.interface import InferenceEngine
from posttrain.pipeline.rollout import generate_groups, sample_seed
from posttrain.pipeline.rollout_source import RolloutBatch
from posttrain.pipeline.step_scoring import sampling_params
from posttrain.pipeline.terminal_rollout import run_terminal_groups
from posttrain.tasks.records import Task


class InlineRollouts:
    runs_in_background = False
    interrupt = None  # each step generates in one call: a notice waits for the step boundary

    def __init__(
        self, config: RunConfig, engine: InferenceEngine, tokenizer, draw_tasks: Callable[[int], list[Task]]
    ) -> None:
        self.config = config
        self.engine = engine
        self.tokenizer = tokenizer
        self.draw_tasks = draw_tasks  # step -> its tasks
        self.params = sampling_params(config)

    def start(self, trained_through: int) -> None:
        pass

    def next_batch(self, step: int) -> RolloutBatch:
        config, params = self.config, self.params
        tasks = self.draw_tasks(step)
        started = time.perf_counter()
        answer = [t for t in tasks if t.kind != "terminal"]
        terminal = [t for t in tasks if t.kind == "terminal"]
        groups = []
        if answer:
            groups += generate_groups(
                self.engine,
                self.tokenizer,
                answer,
                params,
                config.rollout.system_prompt,
                seed_for_slot=lambda slot: sample_seed(config.seed, step, slot),
            )
        if terminal:
            agent_params = replace(params, n=1, max_tokens=config.agent.reply_tokens)
            groups += run_terminal_groups(
                self.engine,
                self.tokenizer,
                terminal,
                config.rollout.group_size,
                agent_params,
                config.agent,
                seed=sample_seed(config.seed, step, len(tasks)),
            )
        return RolloutBatch(step, groups, [t.id for t in tasks], time.perf_counter() - started)

    def publish(self, named_params: Iterable[tuple[str, torch.Tensor]] | None, version: int) -> None:
        if named_params is None:
            self.engine.version = version
        else:
            self.engine.update_weights(named_params, version=version)

    def batch_metrics(self, batch: RolloutBatch, step_s: float) -> dict:
        return {}

    def drain(self, until: float) -> None:
        pass  # nothing runs between steps: each step generates in this thread

    def state_dict(self) -> None:
        return None

    def summary(self, train_loop_s: float, steps_this_session: int) -> dict:
        return {}

    def close(self) -> None:
        close = getattr(self.engine, "close", None)  # vllm: its engine core and staged model folder
        if close is not None:
            close()
