import pytest

from posttrain.models.spec import ModelSpec, ModelSpecError, parse_model_spec


@pytest.mark.parametrize(
    "text, spec",
    [
        ("smollm2-135m", ModelSpec("builtin", "smollm2-135m")),
        ("/models/x", ModelSpec("builtin", "/models/x")),
        ("builtin:/models/x", ModelSpec("builtin", "/models/x")),
        ("hf:/models/x", ModelSpec("hf", "/models/x")),
        ("vllm:/models/x", ModelSpec("vllm", "/models/x")),
        ("openai:http://127.0.0.1:8000/v1#served", ModelSpec("openai", "served", "http://127.0.0.1:8000/v1")),
    ],
)
def test_parse(text, spec):
    assert parse_model_spec(text) == spec


@pytest.mark.parametrize(
    "text, message",
    [
        ("hf:", "expected hf:DIR"),
        ("vllm:", "expected vllm:DIR"),
        ("openai:http://127.0.0.1:8000/v1", "expected openai:BASE_URL#MODEL"),
        ("openai:#served", "expected openai:BASE_URL#MODEL"),
        ("vllm:tiny-llama", "vLLM loads models from a directory"),
    ],
)
def test_malformed_specs_say_what_was_expected(text, message):
    with pytest.raises(ModelSpecError, match=message):
        parse_model_spec(text)
