import pytest

from posttrain.config import EngineConfig
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.factory import engine_for_model, engine_for_spec
from posttrain.engine.hf_engine import HFEngine
from posttrain.errors import PosttrainError


@pytest.mark.parametrize("text, engine_class", [("tiny-llama", BuiltinEngine), ("hf:tiny-llama", HFEngine)])
def test_a_spec_names_its_backend(text, engine_class):
    engine, tokenizer, limit = engine_for_spec(text)
    assert isinstance(engine, engine_class)
    assert tokenizer.pad_token_id is not None and limit == 2048


def test_engine_settings_reach_the_engine(tiny_model, tokenizer):
    engine = engine_for_model(
        EngineConfig(backend="builtin", num_blocks=64, block_size=8), tiny_model, tokenizer, version=3
    )
    assert engine.version == 3 and engine.block_size == 8 and len(engine.blocks.blocks) == 64


def test_unknown_backend_is_an_error(tiny_model, tokenizer):
    settings = EngineConfig.model_construct(backend="tgi")
    with pytest.raises(PosttrainError, match="engine backend 'tgi' is not available"):
        engine_for_model(settings, tiny_model, tokenizer)
