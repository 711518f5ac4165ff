"""Duration parsing helpers."""


def parse_duration(text):
    """Return the total number of seconds in a duration such as "1h30m", "45s", "2d 4h"."""
    raise NotImplementedError
