"""A least-recently-used cache and a memoizing decorator built on it.

LRUCache(capacity, on_evict=None)
    capacity is an int >= 0 (a negative capacity raises ValueError). A capacity-0 cache never
    stores anything. on_evict, if given, is called as on_evict(key, value) for every eviction.

    get(key, default=None)  the stored value (any value, including None, 0, "" ...) if key is
                            present: counts a hit and makes key the most recently used.
                            Otherwise returns default and counts a miss.
    put(key, value)         stores value under key and makes key the most recently used. Updating
                            an existing key never evicts. When a new key would make the cache hold
                            more than capacity keys, the least recently used key is evicted first
                            (counts an eviction, calls on_evict). With capacity 0, put does nothing.
    key in cache            membership only: does not change recency or the statistics.
    len(cache)              number of stored keys.
    keys()                  list of the stored keys, least recently used first.
    stats()                 {"hits": int, "misses": int, "evictions": int}

lru_cached(maxsize)
    Decorator: caches the results of a function in an LRUCache(maxsize), exposed as
    wrapper.cache. Calls with equal positional arguments and equal keyword arguments share an entry,
    whatever the order of the keyword arguments (f(1, a=2, b=3) and f(1, b=3, a=2) are the same
    call); f(1, a=2) and f(1, a=3) are different calls. A call whose arguments are not hashable is
    passed straight to the function, uncached, and does not touch the statistics.
"""
import functools


class LRUCache:
    def __init__(self, capacity, on_evict=None):
        self.capacity = capacity
        self.on_evict = on_evict
        self._data = {}
        self._order = []  # least recently used first
        self._hits = self._misses = self._evictions = 0

    def get(self, key, default=None):
        if self._data.get(key):
            self._hits += 1
            return self._data[key]
        self._misses += 1
        return default

    def put(self, key, value):
        if len(self._data) >= self.capacity:
            old = self._order.pop(0)
            old_value = self._data.pop(old)
            self._evictions += 1
            if self.on_evict:
                self.on_evict(old, old_value)
        self._data[key] = value
        self._order.append(key)

    def __contains__(self, key):
        return self.get(key) is not None

    def __len__(self):
        return len(self._data)

    def keys(self):
        return list(self._order)

    def stats(self):
        return {"hits": self._hits, "misses": self._misses, "evictions": self._evictions}


_MISSING = object()


def lru_cached(maxsize):
    def decorate(fn):
        cache = LRUCache(maxsize)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            key = args
            value = cache.get(key, _MISSING)
            if value is _MISSING:
                value = fn(*args, **kwargs)
                cache.put(key, value)
            return value

        wrapper.cache = cache
        return wrapper

    return decorate
