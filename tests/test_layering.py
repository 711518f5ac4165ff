"""Imports point down the layers of docs/architecture.md, and no two packages import each other.

Every module's imports are read with ast, those inside functions included: a lazy import is
still a dependency.

The faces follow the same rule. A package's cli.py (posttrain/engine/cli.py, and
posttrain/tasks/scene/cli.py under tasks/) belongs to its package: it may import its own package
and the layers below, nothing its package may not. A command that needs a higher layer is
defined in a face at that layer (`posttrain engine verify` compares the engine with the trainer,
so it lives in evaluate/cli.py) and the root face, posttrain/cli.py, adds it to its group. The
root face and dashboard/ are the top layer and may import any package; only the root face
imports a package's cli.py, to gather the commands: nothing else depends on a face.
"""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "posttrain"

# bottom up; a package imports only from its own layer or those below
LAYERS = [
    {"config", "errors", "console", "faults", "storage", "cpu", "cache", "ports", "stop_signals"},  # 0 base
    {"rl", "tasks", "observe", "dispatch", "curriculum"},  # 1 algorithms and records
    {"models"},  # 2 models
    {"engine", "sandbox", "train"},  # 3 machines
    {"agent"},  # 4 episodes
    {"pipeline", "evaluate", "quality", "serve"},  # 5 drivers
    {"cli", "dashboard"},  # 6 faces: posttrain/cli.py and dashboard/ (a package's cli.py sits in its package)
]
INDEPENDENT = {"engine", "sandbox", "train"}  # the machines never import each other
LAYER_OF = {package: index for index, packages in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str:
    """posttrain.engine.builtin.x -> engine; posttrain.engine.cli -> engine; posttrain.cli -> cli."""
    return module.split(".")[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """The posttrain modules `path` imports, resolved from relative imports too."""
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.update(f"{base}.{alias.name}" if alias.name != "*" else base for alias in node.names)
            found.add(base)
    return {name for name in found if name.startswith("posttrain.") and len(name.split(".")) > 1}


def _existing_module(name: str) -> str:
    """`posttrain.a.b.C` names a class in module posttrain.a.b: trim to a module that exists."""
    parts = name.split(".")
    while len(parts) > 2:
        candidate = ROOT.parent.joinpath(*parts)
        if candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file():
            break
        parts.pop()
    return ".".join(parts)


def package_edges() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the 'module -> module' lines that make the edge."""
    edges = defaultdict(list)
    for path in sorted(ROOT.rglob("*.py")):
        source = module_name(path)
        for target in imported_modules(path):
            target = _existing_module(target)
            a, b = package_of(source), package_of(target)
            if a != b:
                edges[a, b].append(f"{source} -> {target}")
    return edges


def test_every_package_has_a_layer():
    packages = {package_of(module_name(p)) for p in ROOT.rglob("*.py") if p.parent != ROOT or p.name != "__init__.py"}
    assert packages - set(LAYER_OF) == set(), "give each new package its place in LAYERS and docs/architecture.md"


def test_imports_point_down():
    upward = [line for (a, b), lines in package_edges().items() if LAYER_OF[b] > LAYER_OF[a] for line in lines]
    assert upward == []


def test_only_the_root_face_imports_a_package_face():
    importers = [
        f"{module_name(path)} -> {target}"
        for path in sorted(ROOT.rglob("*.py"))
        if module_name(path) != "posttrain.cli"
        for target in map(_existing_module, imported_modules(path))
        if target.endswith(".cli")
    ]
    assert importers == []


def test_engine_sandbox_and_train_never_import_each_other():
    crossing = [line for (a, b), lines in package_edges().items() if {a, b} <= INDEPENDENT for line in lines]
    assert crossing == []


def test_no_two_packages_import_each_other():
    edges = package_edges()
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)

    def reaches(start, goal, seen):
        return any(n == goal or (n not in seen and not seen.add(n) and reaches(n, goal, seen)) for n in graph[start])

    cycles = sorted({tuple(sorted((a, b))) for a, b in edges if reaches(b, a, set())})
    assert cycles == [], {c: edges.get(c, []) + edges.get(c[::-1], []) for c in cycles}


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "from posttrain.engine.builtin import engine",
            {"posttrain.engine.builtin", "posttrain.engine.builtin.engine"},
        ),
        ("def f():\n    import posttrain.train.trainer as t", {"posttrain.train.trainer"}),
    ],
)
def test_imports_inside_functions_and_from_packages_are_read(tmp_path, source, expected, monkeypatch):
    path = ROOT / "pipeline" / "_layering_probe.py"
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source if self == path else Path.read_text(self))
    assert imported_modules(path) == expected
