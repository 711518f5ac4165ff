"""Model specs for evaluation, and the engine each one needs.

    smollm2-135m | tiny-llama      the embedded models, on the builtin engine
    hf:DIR                          a Hugging Face checkpoint on transformers generation
    builtin:DIR                     a Hugging Face (Llama-family) checkpoint on the builtin engine
    vllm:DIR                        a checkpoint on vLLM (when installed)
    openai:BASE_URL#MODEL           any OpenAI-compatible server; the key from $OPENAI_API_KEY
                                    (or the variable named by --api-key-env)
"""

from __future__ import annotations

from posttrain.errors import PosttrainError

EMBEDDED = ("smollm2-135m", "tiny-llama")


class ModelSpecError(PosttrainError):
    pass


def build_engine(spec: str, api_key_env: str = "OPENAI_API_KEY", tokenizer_spec: str = "smollm2-135m",
                 concurrency: int = 8):
    """(engine, tokenizer, max_context_tokens) for a model spec."""
    from posttrain.train.model_loading import load_model, load_tokenizer

    if spec.startswith("openai:"):
        from posttrain.engine.openai_engine import OpenAIEngine

        base_url, _, model = spec.removeprefix("openai:").partition("#")
        if not base_url or not model:
            raise ModelSpecError(f"model spec {spec!r}: expected openai:BASE_URL#MODEL")
        tokenizer = load_tokenizer(tokenizer_spec)
        return OpenAIEngine(base_url, model, api_key_env=api_key_env, tokenizer=tokenizer,
                            max_concurrency=concurrency), tokenizer, None
    kind, _, path = spec.partition(":") if spec.split(":", 1)[0] in ("hf", "builtin", "vllm") else ("builtin", "", spec)
    if kind != "builtin" and not path:
        raise ModelSpecError(f"model spec {spec!r}: expected {kind}:DIR")
    source = path or spec
    if kind == "vllm":
        from posttrain.engine.vllm_engine import VLLMEngine

        tokenizer = load_tokenizer(source)
        return VLLMEngine(source), tokenizer, None
    tokenizer = load_tokenizer(source)
    model = load_model(source)
    limit = getattr(model.config, "max_position_embeddings", None)
    if kind == "hf":
        from posttrain.engine.hf_engine import HFEngine

        return HFEngine(model, tokenizer), tokenizer, limit
    from posttrain.engine.builtin.engine import BuiltinEngine

    return BuiltinEngine(model, tokenizer), tokenizer, limit
