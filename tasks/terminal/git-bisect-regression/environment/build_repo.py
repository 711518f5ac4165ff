"""Builds /app/stats-lib: 40 commits, one regression, a few unrelated broken commits."""
import os
import subprocess

REPO = "/app/stats-lib"
os.makedirs(REPO, exist_ok=True)
ENV = dict(os.environ, GIT_AUTHOR_NAME="Dana Dev", GIT_AUTHOR_EMAIL="dana@example.com",
           GIT_COMMITTER_NAME="Dana Dev", GIT_COMMITTER_EMAIL="dana@example.com")


def git(*args):
    subprocess.run(["git", *args], cwd=REPO, env=ENV, check=True, capture_output=True)


TEST = '''"""Regression test for stats.py: exit 0 = pass, 1 = wrong results, 2 = stats cannot be imported."""
import sys

try:
    import stats
except Exception as exc:  # a broken module is not a wrong result
    print(f"cannot import stats: {exc!r}")
    sys.exit(2)

CASES = [
    ("mean", lambda: stats.mean([1, 2, 3, 4]), 2.5),
    ("median odd", lambda: stats.median([5, 1, 3]), 3),
    ("median even", lambda: stats.median([4, 1, 3, 2]), 2.5),
    ("p0", lambda: stats.percentile([10, 20, 30, 40, 50], 0), 10),
    ("p50", lambda: stats.percentile([10, 20, 30, 40, 50], 50), 30),
    ("p90", lambda: stats.percentile([10, 20, 30, 40, 50], 90), 46.0),
    ("p100", lambda: stats.percentile([50, 10, 40, 20, 30], 100), 50),
]
failed = 0
for name, fn, want in CASES:
    try:
        got = fn()
    except Exception as exc:
        got = exc
    if not isinstance(got, (int, float)) or abs(got - want) > 1e-9:
        print(f"FAIL {name}: got {got!r}, want {want!r}")
        failed += 1
print("ok" if not failed else f"{failed} failing")
sys.exit(1 if failed else 0)
'''

state = {
    "version": "1.0.0",
    "pct_var": "rank",
    "pct_bug": False,
    "broken_hint": False,
    "broken_mode": False,
    "extra": [],
    "doc": "Return the p-th percentile of data (0 <= p <= 100), linear interpolation.",
    "median_doc": "Return the median of data.",
}

EXTRA = {
    "variance": "def variance(data):\n    m = mean(data)\n    return sum((x - m) ** 2 for x in data) / len(data)\n",
    "stdev": "def stdev(data):\n    return variance(data) ** 0.5\n",
    "mode": "def mode(data):\n    counts = {}\n    for x in data:\n        counts[x] = counts.get(x, 0) + 1\n    return max(counts, key=lambda k: (counts[k], -k))\n",
    "span": "def span(data):\n    return max(data) - min(data)\n",
    "geometric_mean": "def geometric_mean(data):\n    prod = 1.0\n    for x in data:\n        prod *= x\n    return prod ** (1.0 / len(data))\n",
    "harmonic_mean": "def harmonic_mean(data):\n    return len(data) / sum(1.0 / x for x in data)\n",
    "zscores": "def zscores(data):\n    m, s = mean(data), stdev(data)\n    return [(x - m) / s for x in data]\n",
    "iqr": "def iqr(data):\n    return percentile(data, 75) - percentile(data, 25)\n",
    "clamp": "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n",
    "normalize": "def normalize(data):\n    lo, hi = min(data), max(data)\n    return [(x - lo) / (hi - lo) for x in data]\n",
}


def render():
    s = state
    v = s["pct_var"]
    index = f"(len(ordered)) * p / 100" if s["pct_bug"] else f"(len(ordered) - 1) * p / 100"
    sig = "def percentile(data, p) -> float\n" if s["broken_hint"] else "def percentile(data, p):\n"
    out = f'"""Small statistics helpers."""\n\n__version__ = "{s["version"]}"\n\n\n'
    out += "def mean(data):\n    return sum(data) / len(data)\n\n\n"
    out += f'def median(data):\n    """{s["median_doc"]}"""\n    ordered = sorted(data)\n    n = len(ordered)\n    mid = n // 2\n'
    out += "    if n % 2:\n        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 2\n\n\n"
    out += sig
    out += f'    """{s["doc"]}"""\n    ordered = sorted(data)\n    {v} = {index}\n'
    out += f"    lo = int({v})\n    hi = min(lo + 1, len(ordered) - 1)\n    frac = {v} - lo\n"
    out += "    return ordered[lo] + (ordered[hi] - ordered[lo]) * frac\n"
    for name in s["extra"]:
        body = EXTRA[name]
        if name == "mode" and s["broken_mode"]:
            body = body.replace("counts = {}", "counts = {")
        out += "\n\n" + body
    return out


readme_lines = ["# stats-lib", "", "Tiny statistics helpers without dependencies."]
t = [1700000000]


def commit(msg):
    with open(os.path.join(REPO, "stats.py"), "w") as fh:
        fh.write(render())
    with open(os.path.join(REPO, "README.md"), "w") as fh:
        fh.write("\n".join(readme_lines) + "\n")
    stamp = f"@{t[0]} +0000"
    t[0] += 5400
    git("add", "-A")
    subprocess.run(["git", "commit", "-q", "-m", msg], cwd=REPO, check=True, capture_output=True,
                   env=dict(ENV, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp))


def extra(name):
    state["extra"].append(name)


git("init", "-q", "-b", "main")
steps = [
    ("Initial stats module", lambda: None),
    ("Add regression test", lambda: open(os.path.join(REPO, "test_stats.py"), "w").write(TEST)),
    ("Add variance", lambda: extra("variance")),
    ("Add stdev", lambda: extra("stdev")),
    ("README: usage section", lambda: readme_lines.extend(["", "## Usage", "", "    import stats"])),
    ("Bump version to 1.0.1", lambda: state.update(version="1.0.1")),
    ("Add mode", lambda: extra("mode")),
    ("Clarify median docstring", lambda: state.update(median_doc="Return the median (middle value) of data.")),
    ("Add span", lambda: extra("span")),
    ("README: list functions", lambda: readme_lines.extend(["", "Functions: mean, median, percentile."])),
    ("Rename percentile index variable", lambda: state.update(pct_var="pos")),
    ("Add geometric_mean", lambda: extra("geometric_mean")),
    ("Bump version to 1.1.0", lambda: state.update(version="1.1.0")),
    ("Add harmonic_mean", lambda: extra("harmonic_mean")),
    ("Percentile docstring wording", lambda: state.update(doc="Return the p-th percentile of data, interpolating linearly between ranks.")),
    ("README: note on empty input", lambda: readme_lines.extend(["", "Empty input raises ZeroDivisionError."])),
    ("Add zscores", lambda: extra("zscores")),
    ("Bump version to 1.1.1", lambda: state.update(version="1.1.1")),
    ("README: contributing", lambda: readme_lines.extend(["", "## Contributing", "", "Run python3 test_stats.py."])),
    ("Start adding type hints to percentile", lambda: state.update(broken_hint=True)),
    ("Add iqr", lambda: extra("iqr")),
    ("Finish percentile type hints", lambda: state.update(broken_hint=False)),
    ("Rename percentile position variable back", lambda: state.update(pct_var="rank")),
    ("Bump version to 1.2.0", lambda: state.update(version="1.2.0")),
    ("Add clamp", lambda: extra("clamp")),
    ("Simplify percentile index computation", lambda: state.update(pct_bug=True)),
    ("README: changelog link", lambda: readme_lines.extend(["", "See CHANGES for history."])),
    ("Percentile docstring: mention range", lambda: state.update(doc="Return the p-th percentile of data (p in [0, 100]), interpolating linearly.")),
    ("Add normalize", lambda: extra("normalize")),
    ("Bump version to 1.2.1", lambda: state.update(version="1.2.1")),
    ("Refactor mode tie-breaking", lambda: state.update(broken_mode=True)),
    ("Fix mode dict literal", lambda: state.update(broken_mode=False)),
    ("README: badges", lambda: readme_lines.insert(1, "![tests](badge.svg)")),
    ("Rename percentile variable for clarity", lambda: state.update(pct_var="position")),
    ("Bump version to 1.3.0", lambda: state.update(version="1.3.0")),
    ("README: examples", lambda: readme_lines.extend(["", "    stats.median([1, 2, 3])  # 2"])),
    ("Median docstring tweak", lambda: state.update(median_doc="Return the median of data (the mean of the middle two for even sizes).")),
    ("Bump version to 1.3.1", lambda: state.update(version="1.3.1")),
    ("README: license", lambda: readme_lines.extend(["", "MIT licensed."])),
    ("Bump version to 1.4.0", lambda: state.update(version="1.4.0")),
]
assert len(steps) == 40, len(steps)
for i, (msg, change) in enumerate(steps, 1):
    change()
    commit(msg)
    if i == 2:
        git("tag", "v1.0")
