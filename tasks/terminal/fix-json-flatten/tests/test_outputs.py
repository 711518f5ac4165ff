import json
import subprocess
import sys

import pytest

sys.path.insert(0, "/app")
sys.dont_write_bytecode = True

from flatten import flatten  # noqa: E402


def ref(obj, sep=".", prefix=None, out=None):
    top = out is None
    out = {} if out is None else out
    if isinstance(obj, (dict, list)):
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        if not obj and not top:
            out[prefix] = obj
        for k, v in items:
            key = str(k) if prefix is None else f"{prefix}{sep}{k}"
            ref(v, sep, key, out)
    else:
        out[prefix] = obj
    return out


DOCS = [
    {"a": {"b": 1}},
    {"a": [5, 6]},
    [1, {"x": [None, True]}, []],
    {"user": {"name": "ada", "roles": ["admin", "dev"], "prefs": {}}, "tags": [], "active": True, "score": None,
     "matrix": [[1, 2], [3]], "items": [{"id": 1, "opts": {"x": 0}}, {"id": 2}]},
    {},
    [],
    {"a.b": {"c": 1}, "": {"": 2}, "n": 1.5, "s": "text", "z": False},
    {"deep": {"er": {"est": {"x": [[[]]]}}}},
]


@pytest.mark.parametrize("doc", DOCS)
def test_flatten_default_sep(doc):
    assert flatten(doc) == ref(doc)


@pytest.mark.parametrize("sep", ["/", "__", "."])
def test_flatten_custom_sep(sep):
    for doc in DOCS:
        assert flatten(doc, sep) == ref(doc, sep)
        assert flatten(doc, sep=sep) == ref(doc, sep)


def test_top_level_scalar_rejected():
    for bad in (1, "x", None, 2.5, True):
        with pytest.raises(TypeError):
            flatten(bad)


def test_empty_top_level():
    assert flatten({}) == {} and flatten([]) == {}


def test_cli(tmp_path):
    doc = DOCS[3]
    p = tmp_path / "doc.json"
    p.write_text(json.dumps(doc))
    out = subprocess.run(["python3", "/app/flatten.py", str(p)], capture_output=True, text=True, check=True).stdout
    assert out == json.dumps(ref(doc), sort_keys=True) + "\n"
    out = subprocess.run(["python3", "/app/flatten.py", str(p), "--sep", "/"], capture_output=True, text=True,
                         check=True).stdout
    assert out == json.dumps(ref(doc, "/"), sort_keys=True) + "\n"
    p2 = tmp_path / "list.json"
    p2.write_text(json.dumps(DOCS[2]))
    out = subprocess.run(["python3", "/app/flatten.py", str(p2), "--sep", "::"], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == ref(DOCS[2], "::")
