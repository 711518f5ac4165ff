"""Human-readable durations.

    parse_duration("1h30m")  -> 5400
    format_duration(5400)    -> "1h30m"

Units: w (week, 7 days), d (day), h (hour), m (minute), s (second).

parse_duration(text):
  * text is a sequence of parts NUMBER UNIT, where NUMBER is one or more ASCII digits 0-9 and UNIT is
    one of w d h m s, case-insensitive ("1H30M" is valid), with nothing between them ("1 h" is
    invalid); amounts may be zero or have leading zeros ("0s", "007m");
  * parts may be separated by whitespace, and leading/trailing whitespace is ignored;
  * units must appear in the order w, d, h, m, s, each at most once ("30m1h" and "1h1h" are invalid);
  * anything else (empty text, a number without unit, an unknown unit, a sign, a decimal point,
    stray characters) raises ValueError.

format_duration(seconds):
  * seconds is a non-negative int (a negative value raises ValueError);
  * returns the parts with non-zero amounts, largest unit first, no spaces ("1w2d3h4m5s");
  * 0 is formatted as "0s".
"""
import re

UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d)([dhms])")


def parse_duration(text):
    total = 0
    for number, unit in _PART.findall(text):
        total += int(number) * UNITS[unit]
    return total


def format_duration(seconds):
    parts = []
    for unit, size in UNITS.items():
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts)
