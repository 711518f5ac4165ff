"""A short digest of a tokenizer's vocabulary: two tokenizers with equal fingerprints map text to
the same ids, whatever their directory is called (a trained checkpoint keeps its base model's)."""

from __future__ import annotations

import hashlib
import json


def tokenizer_fingerprint(tokenizer) -> str:
    vocab = sorted(tokenizer.get_vocab().items())
    return hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode()).hexdigest()[:16]
