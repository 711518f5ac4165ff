import sys

import pytest

sys.path.insert(0, "/app")
sys.dont_write_bytecode = True

from lru import LRUCache, lru_cached  # noqa: E402


def test_basic_eviction_order():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    c.put("c", 3)
    assert c.keys() == ["b", "c"]
    assert "a" not in c and len(c) == 2
    assert c.stats() == {"hits": 0, "misses": 0, "evictions": 1}


def test_get_refreshes_recency():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1
    c.put("c", 3)
    assert c.keys() == ["a", "c"]
    assert c.get("b", "dflt") == "dflt"
    assert c.stats() == {"hits": 1, "misses": 1, "evictions": 1}


def test_update_existing_key():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    c.put("a", 10)
    assert c.keys() == ["b", "a"] and len(c) == 2
    assert c.stats()["evictions"] == 0
    c.put("c", 3)
    assert c.keys() == ["a", "c"]
    assert c.get("a") == 10


def test_falsy_values_are_values():
    c = LRUCache(5)
    for k, v in (("none", None), ("zero", 0), ("empty", ""), ("false", False), ("list", [])):
        c.put(k, v)
    assert c.get("none", "dflt") is None
    assert c.get("zero", 99) == 0
    assert c.get("empty", "x") == ""
    assert c.get("false", True) is False
    assert c.get("list", None) == []
    assert c.stats() == {"hits": 5, "misses": 0, "evictions": 0}
    assert c.keys() == ["none", "zero", "empty", "false", "list"]


def test_contains_is_side_effect_free():
    c = LRUCache(2)
    c.put("a", None)
    c.put("b", 2)
    assert "a" in c
    assert "zzz" not in c
    assert c.stats() == {"hits": 0, "misses": 0, "evictions": 0}
    c.put("c", 3)  # "a" is still the least recently used
    assert c.keys() == ["b", "c"]


def test_on_evict_callback():
    seen = []
    c = LRUCache(2, on_evict=lambda k, v: seen.append((k, v)))
    for i in range(5):
        c.put(i, i * i)
    assert seen == [(0, 0), (1, 1), (2, 4)]
    assert c.keys() == [3, 4]


def test_capacity_zero_and_one():
    z = LRUCache(0)
    z.put("a", 1)
    assert len(z) == 0 and z.keys() == [] and "a" not in z
    assert z.get("a") is None
    assert z.stats() == {"hits": 0, "misses": 1, "evictions": 0}
    one = LRUCache(1)
    one.put("a", 1)
    one.put("a", 2)
    assert one.stats()["evictions"] == 0 and one.get("a") == 2
    one.put("b", 3)
    assert one.keys() == ["b"] and one.stats()["evictions"] == 1


def test_negative_capacity():
    with pytest.raises(ValueError):
        LRUCache(-1)


def test_decorator_kwargs():
    calls = []

    @lru_cached(8)
    def scaled(x, scale=1, offset=0):
        calls.append((x, scale, offset))
        return x * scale + offset

    assert scaled(2) == 2
    assert scaled(2, scale=3) == 6
    assert scaled(2, scale=3, offset=1) == 7
    assert scaled(2, offset=1, scale=3) == 7
    assert scaled(2) == 2
    assert len(calls) == 3
    assert scaled.cache.stats() == {"hits": 2, "misses": 3, "evictions": 0}
    assert scaled.__name__ == "scaled"


def test_decorator_caches_none_and_evicts():
    calls = []

    @lru_cached(2)
    def f(x):
        calls.append(x)
        return None

    f(1)
    f(1)
    f(2)
    f(3)
    f(1)
    assert calls == [1, 2, 3, 1]
    assert f.cache.stats() == {"hits": 1, "misses": 4, "evictions": 2}


def test_decorator_unhashable_arguments():
    calls = []

    @lru_cached(4)
    def total(items, extra=0):
        calls.append(1)
        return sum(items) + extra

    assert total([1, 2, 3]) == 6
    assert total([1, 2, 3]) == 6
    assert total((1, 2), extra=[0][0]) == 3
    assert total((1, 2), extra=0) == 3
    assert len(calls) == 3
    assert total.cache.stats() == {"hits": 1, "misses": 1, "evictions": 0}


def test_many_operations_against_model():
    import random
    from collections import OrderedDict
    rng = random.Random(5)
    c = LRUCache(7)
    model = OrderedDict()
    hits = misses = ev = 0
    for _ in range(3000):
        k = rng.randint(0, 15)
        if rng.random() < 0.5:
            if k in model:
                model.move_to_end(k)
                hits += 1
                assert c.get(k) == model[k]
            else:
                misses += 1
                assert c.get(k, -1) == -1
        else:
            v = rng.choice([None, 0, k, "v"])
            if k in model:
                model[k] = v
                model.move_to_end(k)
            else:
                if len(model) >= 7:
                    model.popitem(last=False)
                    ev += 1
                model[k] = v
            c.put(k, v)
        assert c.keys() == list(model)
    assert c.stats() == {"hits": hits, "misses": misses, "evictions": ev}
