"""The built-in inference engine, in the style of nano-vllm: one concept per file.

sequence.py (a request's tokens and state) · block_manager.py (paged KV blocks, prefix cache)
· scheduler.py (continuous batching, chunked prefill, preemption) · model_runner.py (the
forward pass over a paged KV cache) · sampler.py (greedy, temperature, top-p/top-k, logprobs)
· engine.py (the `InferenceEngine` built from them: schedule, run, postprocess) ·
speculative_decoding.py (lossless speculative decoding as one hook on the engine's step), with
drafters.py, draft_verification.py, speculation.py (n-gram drafts, their verification, when to
speculate).
"""
