"""User-facing errors: the CLI prints these as one line, without a traceback."""


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
