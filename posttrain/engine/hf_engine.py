"""The `hf` backend: wraps `transformers` generation. The reference backend: simple and slow."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

import torch
from transformers import GenerationConfig, PreTrainedModel, PreTrainedTokenizerBase

from posttrain.engine.interface import Completion, GenerationRequest, SamplingParams
from posttrain.models.stop_tokens import stop_token_ids


class HFEngine:
    """Batches requests that share sampling settings into one `model.generate` call."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        max_batch_size: int = 64,
        version: int = 0,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_batch_size = max_batch_size
        self.version = version
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.eos_token_ids = stop_token_ids(model, tokenizer)

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None:
        params = dict(self.model.named_parameters())
        buffers = dict(self.model.named_buffers())
        with torch.no_grad():
            for name, tensor in named_tensors:
                target = params.get(name, buffers.get(name))
                if target is None:
                    raise KeyError(f"update_weights: the engine's model has no tensor named {name!r}")
                target.copy_(tensor.to(dtype=target.dtype))
        self.version = version

    def generate(self, requests: list[GenerationRequest]) -> list[Completion]:
        # Rows: one per sample; grouped by sampling settings because one generate() call takes one.
        rows: dict[SamplingParams, list[tuple[int, GenerationRequest, int]]] = defaultdict(list)
        for order, request in enumerate(requests):
            key = replace(request.params, n=1, seed=None)
            for sample_index in range(request.params.n):
                rows[key].append((order, request, sample_index))
        results: dict[tuple[int, int], Completion] = {}
        for params, group in rows.items():
            for start in range(0, len(group), self.max_batch_size):
                chunk = group[start : start + self.max_batch_size]
                for (order, _request, sample_index), completion in zip(chunk, self._generate_chunk(params, chunk)):
                    results[(order, sample_index)] = completion
        return [results[key] for key in sorted(results)]

    def _generate_chunk(
        self, params: SamplingParams, chunk: list[tuple[int, GenerationRequest, int]]
    ) -> list[Completion]:
        prompts = [request.prompt_token_ids for _, request, _ in chunk]
        width = max(len(p) for p in prompts)
        # left padding; made on the model's device (a GPU's, when the policy is there)
        device = self.model.device
        padded = [[self.pad_token_id] * (width - len(p)) + list(p) for p in prompts]
        masks = [[0] * (width - len(p)) + [1] * len(p) for p in prompts]
        input_ids = torch.tensor(padded, dtype=torch.long, device=device)
        attention_mask = torch.tensor(masks, dtype=torch.long, device=device)

        stop_ids = list(dict.fromkeys([*self.eos_token_ids, *params.stop_token_ids]))
        greedy = params.temperature == 0
        config = GenerationConfig(
            max_new_tokens=params.max_tokens,
            do_sample=not greedy,
            temperature=None if greedy else params.temperature,
            top_p=None if greedy or params.top_p >= 1.0 else params.top_p,
            top_k=None if greedy or params.top_k == 0 else params.top_k,
            eos_token_id=stop_ids,
            pad_token_id=self.pad_token_id,
            stop_strings=list(params.stop) or None,
            output_logits=True,
            return_dict_in_generate=True,
        )
        generator_seed = _batch_seed(chunk)
        if generator_seed is not None:
            torch.manual_seed(generator_seed)
        with torch.no_grad():
            out = self.model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                generation_config=config,
                tokenizer=self.tokenizer if params.stop else None,
            )
        new_tokens = out.sequences[:, width:]
        scale = 1.0 if greedy else params.temperature
        step_logprobs = torch.stack(
            [
                torch.log_softmax(logits.float() / scale, dim=-1).gather(-1, new_tokens[:, t : t + 1]).squeeze(-1)
                for t, logits in enumerate(out.logits)
            ],
            dim=1,
        )
        completions = []
        for row, (_, request, sample_index) in enumerate(chunk):
            tokens = new_tokens[row].tolist()
            length, finish = _completion_length(tokens, stop_ids, params.max_tokens)
            tokens = tokens[:length]
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
            text, length, finish = self._apply_stop_strings(tokens, text, params.stop, length, finish)
            completions.append(
                Completion(
                    request_id=request.request_id,
                    sample_index=sample_index,
                    prompt_token_ids=list(request.prompt_token_ids),
                    token_ids=tokens[:length],
                    logprobs=step_logprobs[row, :length].tolist(),
                    finish_reason=finish,
                    text=text,
                    version=self.version,
                )
            )
        return completions

    def _apply_stop_strings(self, tokens: list[int], text: str, stop: tuple[str, ...], length: int, finish: str):
        """Cut at the first stop string: the text ends before it, the tokens end with the token
        that completed it (the model did emit it, and the trainer must see what it emitted)."""
        hits = [(text.find(s), s) for s in stop if s in text]
        if not hits:
            return text, length, finish
        cut, _ = min(hits)
        for end in range(1, length + 1):
            decoded = self.tokenizer.decode(tokens[:end], skip_special_tokens=True)
            if any(s in decoded for _, s in hits):
                return text[:cut], end, "stop"
        return text[:cut], length, "stop"


def _completion_length(tokens: list[int], stop_ids: list[int], max_tokens: int) -> tuple[int, str]:
    """Generated rows are padded after a stop token; the completion keeps the stop token."""
    for i, token in enumerate(tokens):
        if token in stop_ids:
            return i + 1, "stop"
    return min(len(tokens), max_tokens), "length"


def _batch_seed(chunk: list[tuple[int, GenerationRequest, int]]) -> int | None:
    """One torch generator drives a whole generate() call, so the batch's seeds are folded
    into one: the same requests with the same seeds sample the same tokens."""
    seeds = [(request.params.seed, sample_index) for _, request, sample_index in chunk]
    if all(seed is None for seed, _ in seeds):
        return None
    digest = hashlib.sha256(repr(seeds).encode()).digest()
    return int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF
