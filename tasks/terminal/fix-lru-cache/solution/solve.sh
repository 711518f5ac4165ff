#!/bin/bash
set -euo pipefail
python3 - <<'PY'
p = "/app/lru.py"
s = open(p).read()
doc_end = s.index('"""', 3) + 3
s = s[:doc_end] + '''
import functools
from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity, on_evict=None):
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self.on_evict = on_evict
        self._data = OrderedDict()  # least recently used first
        self._hits = self._misses = self._evictions = 0

    def get(self, key, default=None):
        if key in self._data:
            self._hits += 1
            self._data.move_to_end(key)
            return self._data[key]
        self._misses += 1
        return default

    def put(self, key, value):
        if self.capacity == 0:
            return
        if key in self._data:
            self._data[key] = value
            self._data.move_to_end(key)
            return
        if len(self._data) >= self.capacity:
            old, old_value = self._data.popitem(last=False)
            self._evictions += 1
            if self.on_evict:
                self.on_evict(old, old_value)
        self._data[key] = value

    def __contains__(self, key):
        return key in self._data

    def __len__(self):
        return len(self._data)

    def keys(self):
        return list(self._data)

    def stats(self):
        return {"hits": self._hits, "misses": self._misses, "evictions": self._evictions}


_MISSING = object()


def lru_cached(maxsize):
    def decorate(fn):
        cache = LRUCache(maxsize)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            try:
                hash(key)
            except TypeError:
                return fn(*args, **kwargs)
            value = cache.get(key, _MISSING)
            if value is _MISSING:
                value = fn(*args, **kwargs)
                cache.put(key, value)
            return value

        wrapper.cache = cache
        return wrapper

    return decorate
'''
open(p, "w").write(s)
PY
