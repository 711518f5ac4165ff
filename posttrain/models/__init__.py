"""Models and tokenizers, below the machines that use them (engine, trainer, agent).

    from posttrain.models.loading import load_model, load_tokenizer
    from posttrain.models.spec import parse_model_spec

    tokenizer = load_tokenizer("smollm2-135m")   # or "tiny-llama", or a Hugging Face directory
    model = load_model("smollm2-135m", dtype="float32")
    parse_model_spec("vllm:/models/x")           # ModelSpec(backend="vllm", model="/models/x")

An engine for a spec: posttrain.engine.factory.engine_for_spec (it imports the engines, which
sit above this package).
"""
