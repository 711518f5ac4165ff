import pytest
import torch

from posttrain.errors import ModelLoadError
from posttrain.models.loading import load_model, load_tokenizer, resolve_model_dir, smollm2_dir


def test_tiny_llama_is_seeded_and_small():
    a, b = load_model("tiny-llama", seed=1), load_model("tiny-llama", seed=1)
    assert sum(p.numel() for p in a.parameters()) < 5_000_000
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="no config.json"):
        resolve_model_dir(str(tmp_path))


def test_unknown_dtype():
    with pytest.raises(ModelLoadError, match="unknown dtype 'float8'"):
        load_model("tiny-llama", dtype="float8")


@pytest.mark.slow
def test_smollm2_converts_once_and_loads_as_a_plain_hf_directory(tmp_path):
    directory = smollm2_dir()
    assert (directory / "model.safetensors").is_file()
    assert smollm2_dir() == directory  # cached: no second conversion
    model = load_model("smollm2-135m")
    assert model.config.num_hidden_layers == 30 and model.dtype == torch.float32
    # Any HF directory loads the same way: save and reload through the `hf:` spec.
    model.save_pretrained(tmp_path)
    reloaded = load_model(f"hf:{tmp_path}")
    tokenizer = load_tokenizer("smollm2-135m")
    ids = tokenizer("The capital of France is", return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, reloaded(ids).logits)
        greedy = model.generate(ids, max_new_tokens=3, do_sample=False)
    assert "Paris" in tokenizer.decode(greedy[0, ids.shape[1] :])
