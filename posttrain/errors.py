"""User-facing errors: the CLI prints these as one line, without a traceback."""

import difflib


class PosttrainError(Exception):
    """An error caused by the user's input (config, task file, model spec), stated in one line."""


class ConfigError(PosttrainError):
    """A run config that fails validation; the message names the file, the key and the reason."""


class TaskSourceError(PosttrainError):
    """A task source that cannot be read; the message names the file or source and the field."""


class ModelLoadError(PosttrainError):
    """A model spec that does not resolve to a loadable model."""


class StorageError(PosttrainError):
    """Storage at a URL that cannot be reached, or holds something unexpected."""


def did_you_mean(name: str, known, cutoff: float = 0.6) -> str:
    """' (did you mean X?)' with the known name that `name` most resembles, or '' when none
    is close: the end of an "unknown name" message, so that a typo is one look to fix."""
    close = difflib.get_close_matches(name, [str(k) for k in known], n=1, cutoff=cutoff)
    return f" (did you mean {close[0]}?)" if close else ""
