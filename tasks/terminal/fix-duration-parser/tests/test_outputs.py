import sys

import pytest

sys.path.insert(0, "/app")
sys.dont_write_bytecode = True

import duration  # noqa: E402

VALID = {
    "45s": 45,
    "90m": 5400,
    "1h30m": 5400,
    "1H30M": 5400,
    "2d": 172800,
    "1w": 604800,
    "1w2d": 604800 + 172800,
    " 1h 15m 10s ": 4510,
    "1w 1d 1h 1m 1s": 694861,
    "0s": 0,
    "100h": 360000,
    "007m": 420,
    "1h\t5s": 3605,
    "12d0h1s": 1036801,
}
INVALID = ["", "   ", "5", "1x", "h", "1h1h", "30m1h", "1s1m", "-5m", "+5m", "1.5h", "1h30", "1h,30m",
           "1 h", "abc", "1hh", "5m garbage", "1d2w", "m5"]


@pytest.mark.parametrize("text,want", sorted(VALID.items()))
def test_parse_valid(text, want):
    assert duration.parse_duration(text) == want


@pytest.mark.parametrize("text", INVALID)
def test_parse_invalid(text):
    with pytest.raises(ValueError):
        duration.parse_duration(text)


FORMAT = {0: "0s", 1: "1s", 59: "59s", 60: "1m", 3600: "1h", 5400: "1h30m", 86400: "1d", 90061: "1d1h1m1s",
          604800: "1w", 694861: "1w1d1h1m1s", 1209600 + 7: "2w7s", 10 ** 7: "16w3d17h46m40s"}


@pytest.mark.parametrize("secs,want", sorted(FORMAT.items()))
def test_format(secs, want):
    assert duration.format_duration(secs) == want


def test_format_negative():
    with pytest.raises(ValueError):
        duration.format_duration(-1)


def test_round_trip():
    for secs in list(range(0, 200000, 997)) + [604799, 604801, 3 * 604800 + 1]:
        assert duration.parse_duration(duration.format_duration(secs)) == secs
