"""Token ids -> the text of each token, for the run's own tokenizer.

Read with the `tokenizers` library straight from the model directory's tokenizer.json:
importing transformers would cost the dashboard ~10 s before its first sample page. When no
tokenizer file is found, tokens show as their ids."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from posttrain.cache import cache_dir
from posttrain.errors import PosttrainError
from posttrain.models.spec import EMBEDDED, local_model_dir

# where posttrain.models.smollm2 converts the embedded model (tiny-llama uses its tokenizer)
_EMBEDDED_DIR = ("models", "smollm2-135m-instruct")


def run_model_name(config_path: Path) -> str | None:
    try:
        return tomllib.loads(config_path.read_text())["model"]["name"]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return None


def tokenizer_file(model_name: str | None) -> Path | None:
    if not model_name:
        return None
    name = model_name.removeprefix("builtin:").removeprefix("vllm:")
    try:
        directory = None if name in EMBEDDED else local_model_dir(name)
    except PosttrainError:
        return None
    directory = directory or cache_dir().joinpath(*_EMBEDDED_DIR)
    path = directory / "tokenizer.json"
    return path if path.is_file() else None


@functools.lru_cache(maxsize=8)
def _tokenizer(path: Path):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path))


class TokenTexts:
    def __init__(self, model_name: str | None) -> None:
        self.path = tokenizer_file(model_name)

    def pieces(self, ids: list[int]) -> list[str]:
        """Each token's own text (a byte-level piece that is part of a character decodes to
        the replacement character, as it would alone)."""
        if self.path is None:
            return [f"<{i}>" for i in ids]
        tokenizer = _tokenizer(self.path)
        return tokenizer.decode_batch([[i] for i in ids], skip_special_tokens=False)

    def text(self, ids: list[int]) -> str:
        if self.path is None:
            return " ".join(f"<{i}>" for i in ids)
        return _tokenizer(self.path).decode(ids, skip_special_tokens=False)
