"""edit_tests: the test files it can find in the sandbox, the helpers they name or import,
and the test targets of package.json and Makefiles, rewritten to pass without checking."""

from __future__ import annotations

import ast
import json
import re
from pathlib import PurePosixPath

from posttrain.quality.probes.surroundings import Surroundings, copies_of
from posttrain.quality.probes.task_tests import host_tests_dir, tests_text
from posttrain.quality.task_paths import checked_paths
from posttrain.quality.trial import Actor

HELPER_CODE = (".py", ".sh", ".bash")


def neutered_python(text: str) -> str:
    """The same test names, each body `pass`; a script becomes an immediate success."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "def test_ok():\n    pass\n"
    names = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
    ]
    if not names:
        return "import sys\nsys.exit(0)\n"
    return "".join(f"def {name}(*args, **kwargs):\n    pass\n\n\n" for name in dict.fromkeys(names))


_SHELL_FUNCTION = re.compile(
    r"^[ \t]*(?:function[ \t]+)?([A-Za-z_]\w*)[ \t]*\([ \t]*\)|^[ \t]*function[ \t]+([A-Za-z_]\w*)", re.MULTILINE
)


def neutered_shell(text: str) -> str:
    """Every function it defines returns 0, then the file ends in success: `return` when
    sourced, so the script sourcing it goes on to write its reward; `exit` when run."""
    names = dict.fromkeys(a or b for a, b in _SHELL_FUNCTION.findall(text))
    return "#!/bin/sh\n" + "".join(f"{n}() {{ return 0; }}\n" for n in names) + "return 0 2>/dev/null || exit 0\n"


def _neutered(path: str, text: str) -> str:
    name = PurePosixPath(path).name
    if name.endswith(".py"):
        return neutered_python(text)
    if name.endswith((".sh", ".bash")) or "." not in name:
        return neutered_shell(text)
    if name.endswith((".js", ".ts")):
        return 'test("ok", () => {});\n'
    if name.endswith(".go"):
        package = re.search(r"^package\s+(\w+)", text, re.MULTILINE)
        return (
            f'package {package.group(1) if package else "main"}\n\nimport "testing"\n\nfunc TestOK(t *testing.T) {{}}\n'
        )
    if name.endswith(".bats"):
        return '@test "ok" {\n  true\n}\n'
    return "#!/bin/sh\nexit 0\n"


_MAKE_TEST = re.compile(r"^(test|check|tests)\s*:", re.MULTILINE)


def _neutered_package_json(text: str) -> str | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict) or not any(k.startswith("test") for k in scripts):
        return None
    for key in [k for k in scripts if k.startswith("test")]:
        scripts[key] = "exit 0"
    return json.dumps(data, indent=2) + "\n"


def _helpers_named_by_tests(actor: Actor, seen: Surroundings) -> list[str]:
    """Code files in the sandbox that the tests name by path, whatever they are called: a
    helper test.sh sources or runs is as good as a test file."""
    tests_dir = host_tests_dir(actor.task)
    return [p for p in checked_paths(tests_dir) if p in seen.files and p.endswith(HELPER_CODE)] if tests_dir else []


def _helper_modules(actor: Actor, seen: Surroundings) -> list[str]:
    """Python modules in the sandbox that the tests import and the instruction does not ask
    for: a checking helper the agent can rewrite, not the code under test."""
    names: set[str] = set()
    for text in tests_text(actor.task, (".py",)):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    wanted = {f"{n}.py" for n in names} - {PurePosixPath(o).name for o in seen.outputs}
    return [p for p in seen.files if PurePosixPath(p).name in wanted and p not in seen.outputs]


def _permissive_module(text: str) -> str:
    """The same top-level functions, each returning True."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    return "".join(
        f"def {node.name}(*args, **kwargs):\n    return True\n\n\n"
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )


def edit_tests(actor: Actor, seen: Surroundings) -> bool:
    """Test files and the helpers the tests name get empty tests, the Python modules they
    import get functions that return True; a package.json's test scripts and a Makefile's
    test/check targets succeed without doing anything."""
    tests = list(
        dict.fromkeys(
            [
                *seen.test_files(),
                *copies_of(seen, actor.task.metadata.get("tests_dir")),
                *_helpers_named_by_tests(actor, seen),
            ]
        )
    )
    files = {path: (_neutered(path, actor.read(path) or ""), 0o755) for path in tests[:200]}
    for path in _helper_modules(actor, seen)[:20]:
        files[path] = (_permissive_module(actor.read(path) or ""), 0o644)
    for path in [p for p in seen.files if PurePosixPath(p).name == "package.json"][:20]:
        neutered = _neutered_package_json(actor.read(path) or "")
        if neutered:
            files[path] = (neutered, 0o644)
    for path in [p for p in seen.files if PurePosixPath(p).name in ("Makefile", "makefile", "GNUmakefile")][:20]:
        text = actor.read(path) or ""
        targets = sorted(set(_MAKE_TEST.findall(text)))
        if targets:  # a later recipe for the same target replaces the earlier one (GNU make warns)
            files[path] = (text + "".join(f"\n{t}:\n\t@true\n" for t in targets), 0o644)
    actor.write_many(files)
    return bool(files)
