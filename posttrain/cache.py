"""Where posttrain keeps what it builds once per machine (converted models, compiled helpers,
environment layers)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    return Path(os.environ.get("POSTTRAIN_CACHE", Path.home() / ".cache" / "posttrain"))
