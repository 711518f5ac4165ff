"""The token bucket behind --rate-limit, on an injected clock."""

import pytest

from posttrain.errors import PosttrainError
from posttrain.serve.rate_limit import RateLimit, RateLimiter, TokenBucket, parse_rate_limit


@pytest.mark.parametrize(
    "text, limit", [("60/min", RateLimit(60, 60.0)), ("5/s", RateLimit(5, 1.0)), (" 2 / min ", RateLimit(2, 60.0))]
)
def test_the_spellings(text, limit):
    assert parse_rate_limit(text) == limit
    assert str(limit) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["60", "0/s", "60/hour", "-1/s", "1.5/s", "x/min", ""])
def test_other_spellings_are_one_error_naming_the_flag(text):
    with pytest.raises(PosttrainError, match=r"--rate-limit: expected N/s or N/min"):
        parse_rate_limit(text)


def test_a_full_bucket_allows_a_burst_then_refills_at_the_rate():
    bucket = TokenBucket(RateLimit(3, 60.0), now=100.0)  # 3 a minute: one token per 20 s
    assert [bucket.take(100.0) for _ in range(3)] == [0, 0, 0]
    assert bucket.take(100.0) == 20  # empty: a token is back in 20 s
    assert bucket.take(110.0) == 10
    assert bucket.take(119.5) == 1  # half a second left: Retry-After is whole seconds, at least 1
    assert bucket.take(120.0) == 0
    assert bucket.take(120.0) == 20
    # idle for long: refilled to the burst size, never beyond
    assert [bucket.take(1000.0) for _ in range(4)] == [0, 0, 0, 20]


def test_a_refused_request_takes_nothing():
    bucket = TokenBucket(RateLimit(1, 1.0), now=0.0)
    assert bucket.take(0.0) == 0
    for now in (0.1, 0.5, 0.9):
        assert bucket.take(now) == 1
    assert bucket.take(1.0) == 0


def test_a_clock_going_backwards_gives_no_tokens():
    bucket = TokenBucket(RateLimit(1, 1.0), now=10.0)
    assert bucket.take(10.0) == 0
    assert bucket.take(5.0) == 1 and bucket.take(10.5) == 1 and bucket.take(11.0) == 0


def test_each_client_has_its_own_bucket():
    limiter = RateLimiter(RateLimit(2, 1.0))
    assert [limiter.take("key:a", 0.0) for _ in range(3)] == [0, 0, 1]
    assert [limiter.take("key:b", 0.0) for _ in range(2)] == [0, 0]
    assert limiter.take("key:a", 0.5) == 0


def test_the_table_of_buckets_stays_bounded_under_a_flood_of_addresses():
    limiter = RateLimiter(RateLimit(2, 60.0), max_buckets=100)
    limiter.take("busy", 0.0)
    limiter.take("busy", 0.0)
    for index in range(1000):
        limiter.take(f"address:{index}", float(index) * 0.001)
    assert len(limiter.buckets) <= 100
    # an idle client that refilled was forgotten; it starts again with a full bucket
    limiter = RateLimiter(RateLimit(1, 1.0), max_buckets=2)
    limiter.take("a", 0.0), limiter.take("b", 0.0)
    limiter.take("c", 5.0)
    assert set(limiter.buckets) == {"c"}
