"""The `builtin` backend: requests in, completions out, through the scheduler and model runner."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from posttrain.engine.builtin.allocator import keep_freed_memory
from posttrain.engine.builtin.block_manager import BlockManager
from posttrain.engine.builtin.model_runner import ModelRunner
from posttrain.engine.builtin.onednn_linear import use_onednn_linear
from posttrain.engine.builtin.row_invariance import RowInvariance
from posttrain.engine.builtin.sampler import sample, top_logprobs
from posttrain.engine.builtin.scheduler import ScheduledChunk, Scheduler
from posttrain.engine.builtin.sequence import Sequence, SequenceStatus
from posttrain.engine.builtin.speculative_decoding import PlainDecoding, SpeculativeDecoding
from posttrain.engine.interface import Completion, GenerationRequest


@dataclass
class EngineStats:
    steps: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    computed_tokens: int = 0
    generated_tokens: int = 0
    preemptions: int = 0
    draft_tokens: int = 0  # speculative tokens proposed and verified
    accepted_draft_tokens: int = 0

    @property
    def acceptance_rate(self) -> float:
        return self.accepted_draft_tokens / self.draft_tokens if self.draft_tokens else 0.0

    @property
    def prefix_hit_rate(self) -> float:
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


_warned: set[RowInvariance] = set()


def _warn_once(invariance: RowInvariance) -> None:
    """Bit-equal logprobs rest on the start-up probe (row_invariance.py); say once per process
    when this CPU's kernels do not give them."""
    if invariance.holds or invariance in _warned:
        return
    _warned.add(invariance)
    from posttrain.console import console

    console.print(
        f"[yellow]warning:[/] builtin engine: {invariance.describe()}; its logprobs may differ from the "
        "trainer's by float rounding (logprob_mismatch_max shows by how much)",
        highlight=False,
        soft_wrap=True,
    )


def _logit_rows(completing: list[ScheduledChunk]) -> list[slice]:
    """Each completing chunk's rows of the step's logits, in order: one, or 1 + num_draft for a
    chunk that carries a draft (its last known token's row, then each draft token's)."""
    rows, start = [], 0
    for chunk in completing:
        rows.append(slice(start, start + 1 + chunk.num_draft))
        start += 1 + chunk.num_draft
    return rows


class BuiltinEngine:
    def __init__(
        self,
        model: torch.nn.Module,
        tokenizer,
        num_blocks: int = 2048,
        block_size: int = 16,
        max_num_seqs: int = 128,
        max_num_batched_tokens: int = 2048,
        version: int = 0,
        decode_cache_bytes: int | None = None,
        speculative: bool = False,
        compile_step: bool = False,
        kv_cache_dtype: str = "auto",
    ) -> None:
        """decode_cache_bytes: memory for the decoding sequences' contiguous KV rows (default
        twice the paged cache); 0 gathers every step's context from the paged cache instead.
        speculative: draft tokens by n-gram lookup and verify them in the step's pass
        (speculative_decoding.py); lossless, and off for steps where it would not pay.
        compile_step: the decoder layers as one torch.compile graph (compiled_step.py), for
        serving: faster steps, the same tokens across batch shapes, but not the trainer's bits.
        kv_cache_dtype: "auto"/"fp32" (the model's dtype) or "int8": a quarter of the bytes a token,
        not lossless (kv_quant.py)."""
        keep_freed_memory()
        self.model = use_onednn_linear(model).eval()
        self.tokenizer = tokenizer
        self.version = version
        self.block_size = block_size
        self.blocks = BlockManager(num_blocks, block_size)
        self.scheduler = Scheduler(self.blocks, max_num_seqs, max_num_batched_tokens)
        self.runner = ModelRunner(
            model, num_blocks, block_size, decode_cache_bytes, compile_step=compile_step, kv_cache_dtype=kv_cache_dtype
        )
        self.invariance = self.runner.invariance
        _warn_once(self.invariance)
        self.stats = EngineStats()
        self._ids = itertools.count()
        self._held: dict[int, list[Sequence]] = {}  # parent seq id -> its samples waiting for a fork
        self._lock = threading.RLock()
        self._paused = threading.Event()
        self._paused.set()
        eos = getattr(model.generation_config, "eos_token_id", None) if hasattr(model, "generation_config") else None
        eos = eos if eos is not None else model.config.eos_token_id
        self.eos_token_ids = set(eos if isinstance(eos, list) else [eos]) | (
            {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
        )
        self._max_len = getattr(model.config, "max_position_embeddings", 1 << 30)
        self.speculation = (
            SpeculativeDecoding(self.stats, self.runner.decode_cache, self._max_len) if speculative else PlainDecoding()
        )

    # ---- the InferenceEngine interface ----------------------------------------------------

    def generate(self, requests: list[GenerationRequest]) -> list[Completion]:
        with self._lock:
            seqs = self.add_requests(requests)
            while any(not s.is_finished for s in seqs):
                self.step()
            return [self._completion(s) for s in seqs]

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None:
        with self._lock:
            params = dict(self.model.named_parameters())
            with torch.no_grad():
                for name, tensor in named_tensors:
                    if name not in params:
                        raise KeyError(f"update_weights: the engine's model has no tensor named {name!r}")
                    params[name].copy_(tensor.to(dtype=params[name].dtype))
            self.blocks.invalidate_prefix_cache()
            self.version = version

    # ---- finer control, for async trainers --------------------------------------------------

    def add_requests(self, requests: list[GenerationRequest]) -> list[Sequence]:
        """Queue the requests. Of a request's n samples only the first prefills the prompt; the
        others are forked from it once its prompt is computed, sharing its KV blocks and its
        last-position logits (each draws its own token from them)."""
        seqs = []
        for request in requests:
            samples = []
            for sample_index in range(request.params.n):
                seq_id = next(self._ids)
                samples.append(
                    Sequence(
                        seq_id,
                        request.request_id,
                        sample_index,
                        request.prompt_token_ids,
                        request.params,
                        self.block_size,
                        arrival=seq_id,
                    )
                )
            self.scheduler.add(samples[0])
            if len(samples) > 1:
                self._held[samples[0].seq_id] = samples[1:]
            seqs.extend(samples)
        return seqs

    def step(self) -> None:
        """One scheduling step, as nano-vllm's: schedule, run the model, postprocess. The
        speculation hook (speculative_decoding.py) drafts tokens before the schedule, verifies
        them in the postprocess and times the step; plain decoding's hook does nothing."""
        self.speculation.draft(self.scheduler)
        chunks = self.scheduler.schedule()
        if not chunks:
            raise RuntimeError(
                "the scheduler could not schedule anything: the KV cache is too small "
                "for one sequence; raise num_blocks"
            )
        logits = self.runner.run(chunks)
        self._postprocess(chunks, logits)
        self.speculation.step_done(chunks)

    def _postprocess(self, chunks: list[ScheduledChunk], logits: torch.Tensor) -> None:
        """Advance each sequence past the tokens this step computed; then each sequence whose
        known tokens are all computed gets its next token, sampled from its row of logits, or,
        where it carried a draft, the drafts the model agrees with and one more."""
        completing = [c for c in chunks if c.completes]
        for chunk in chunks:
            chunk.seq.num_computed_tokens += chunk.num_tokens - chunk.num_draft
            self.stats.computed_tokens += chunk.num_tokens
            self.blocks.register_computed(chunk.seq)
        rows = _logit_rows(completing)
        self._sample([(c.seq, r.start) for c, r in zip(completing, rows) if not c.num_draft], logits)
        for chunk, chunk_rows in zip(completing, rows):
            if chunk.num_draft:
                self._append_verified(chunk.seq, logits[chunk_rows])
        self.stats.steps += 1
        self.stats.preemptions = self.scheduler.preemptions

    def _sample(self, seq_rows: list[tuple[Sequence, int]], logits: torch.Tensor) -> None:
        """One token for each (sequence, row of logits); forked samples draw their own token
        from their parent's row."""
        seqs = [seq for seq, _ in seq_rows]
        rows = [row for _, row in seq_rows]
        for row, parent in zip(list(rows), list(seqs)):
            for child in self._held.pop(parent.seq_id, ()):
                copy = self.scheduler.fork(parent, child)
                if copy is False:
                    continue  # no room now: it waits and prefills from the prefix cache
                if copy is not None:
                    self.runner.copy_block(*copy)
                seqs.append(child)
                rows.append(row)
        if not seqs:
            return
        if rows != list(range(len(logits))):  # other rows are drafts', or a row is shared by forks
            logits = logits[torch.tensor(rows)]
        tokens, logprobs = sample(logits, [s.params for s in seqs], [s.generator for s in seqs])
        for index, (seq, token, logprob) in enumerate(zip(seqs, tokens, logprobs)):
            if seq.params.top_logprobs:
                seq.top_logprobs.extend(
                    top_logprobs(logits[index : index + 1], seq.params.temperature or 1.0, seq.params.top_logprobs)
                )
            self._append(seq, token, logprob)

    def _append_verified(self, seq: Sequence, logits: torch.Tensor) -> None:
        """The tokens the speculation hook keeps of the sequence's draft, and one more; the kept
        drafts' KV was computed in this step's pass."""
        tokens, logprobs = self.speculation.verify(seq, logits)
        if seq.params.top_logprobs:
            tops = top_logprobs(logits[: len(tokens)], seq.params.temperature or 1.0, seq.params.top_logprobs)
        for index, (token, logprob) in enumerate(zip(tokens, logprobs)):
            if seq.params.top_logprobs:
                seq.top_logprobs.append(tops[index])
            if index < len(tokens) - 1:
                seq.num_computed_tokens += 1
            if self._append(seq, token, logprob):
                return
        self.blocks.register_computed(seq)

    def _append(self, seq: Sequence, token: int, logprob: float) -> bool:
        """Add a generated token; True when it finished the sequence."""
        seq.append(token, logprob, self.version)
        self.stats.generated_tokens += 1
        reason = self._finish_reason(seq, token)
        if not reason:
            return False
        self._account(seq)
        self.scheduler.finish(seq, reason)
        self.speculation.finished(seq)
        return True

    def abort(self, request_ids: Iterable[str]) -> None:
        wanted = set(request_ids)
        with self._lock:
            held = [
                child for parent_id in list(self._held) for child in self._held[parent_id] if child.request_id in wanted
            ]
            for parent_id, children in list(self._held.items()):
                if children and children[0].request_id in wanted:
                    del self._held[parent_id]
            for seq in held:
                self._account(seq)
                seq.status, seq.finish_reason = SequenceStatus.FINISHED, "abort"
            for seq in [*self.scheduler.running, *self.scheduler.waiting]:
                if seq.request_id in wanted:
                    self._account(seq)
                    self.scheduler.finish(seq, "abort")
                    self.speculation.finished(seq)

    def has_work(self) -> bool:
        """Whether a step() has anything to do: some sequence waits or runs (a driver that steps
        the engine itself asks before each step)."""
        return self.scheduler.has_work()

    @property
    def prefix_hit_rate(self) -> float:
        return self.blocks.hit_rate

    @property
    def live_sequences(self) -> int:
        """Sequences the engine holds: waiting, running, or waiting to fork from their prompt's
        first sample; 0 once every request finished or was aborted (read without the lock)."""
        held = self._held.copy()
        return len(self.scheduler.waiting) + len(self.scheduler.running) + sum(len(c) for c in held.values())

    @property
    def kv_blocks_in_use(self) -> int:
        """KV blocks some sequence holds; a freed block that keeps cached prefix content is free."""
        return len(self.blocks.blocks) - self.blocks.num_free

    @property
    def lock(self) -> threading.RLock:
        """Held during each step and weight update: a driver that steps the engine itself
        (posttrain.engine.stepping_loop) takes it around its own calls."""
        return self._lock

    def completion(self, seq: Sequence) -> Completion:
        """The finished sequence as a Completion (for drivers using add_requests/step)."""
        return self._completion(seq)

    # ---- helpers ----------------------------------------------------------------------------

    def _finish_reason(self, seq: Sequence, token: int) -> str | None:
        params = seq.params
        if token in self.eos_token_ids or token in params.stop_token_ids:
            return "stop"
        if params.stop and any(s in self._text(seq) for s in params.stop):
            return "stop"
        if seq.num_completion_tokens >= params.max_tokens or len(seq) >= self._max_len:
            return "length"
        return None

    def _account(self, seq: Sequence) -> None:
        self.stats.prompt_tokens += seq.num_prompt_tokens
        self.stats.cached_prompt_tokens += seq.num_cached_prompt_tokens if seq.preemptions == 0 else 0

    def _text(self, seq: Sequence) -> str:
        return self.tokenizer.decode(seq.completion_token_ids, skip_special_tokens=True)

    def _completion(self, seq: Sequence) -> Completion:
        tokens = seq.completion_token_ids
        text = self._text(seq)
        if seq.params.stop:
            cuts = [text.find(s) for s in seq.params.stop if s in text]
            if cuts:
                text = text[: min(cuts)]
        return Completion(
            request_id=seq.request_id,
            sample_index=seq.sample_index,
            prompt_token_ids=seq.token_ids[: seq.num_prompt_tokens],
            token_ids=tokens,
            logprobs=list(seq.logprobs),
            finish_reason=seq.finish_reason or "length",
            text=text,
            version=seq.token_versions[0] if seq.token_versions else self.version,
            token_versions=list(seq.token_versions),
            cached_prompt_tokens=seq.num_cached_prompt_tokens if seq.preemptions == 0 else 0,
            top_logprobs=list(seq.top_logprobs) if seq.params.top_logprobs else None,
        )
