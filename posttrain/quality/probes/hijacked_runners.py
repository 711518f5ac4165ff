"""Hijacked runners: the programs that run the tests, made to report success. pytest_hooks
plants pytest configuration and Python startup hooks, shadow_binaries fakes the tools on
PATH (and as shell functions and aliases), exit_on_load makes every code file of the
workspace end its process with status 0 as soon as it is loaded."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath

from posttrain.quality.probes.payloads import EXIT_AT_ONCE, FAKE_BINARY, FORCE_PASS_PLUGIN, PYTEST_INI, STARTUP_HOOK
from posttrain.quality.probes.surroundings import TEST_FILE, Surroundings
from posttrain.quality.probes.task_tests import path_dirs_of_tests, sourced_by_tests, sources_of_tests
from posttrain.quality.trial import Actor

SHADOWED = (
    "python",
    "python3",
    "pytest",
    "py.test",
    "bash",
    "sh",
    "curl",
    "wget",
    "node",
    "npm",
    "make",
    "diff",
    "cmp",
    "grep",
    "jq",
    "sqlite3",
    "gcc",
    "cc",
    "go",
    "cargo",
    "java",
    "ruby",
    "perl",
    "git",
    "timeout",
)
RC_FILES = (
    "/root/.bashrc",
    "/root/.bash_profile",
    "/root/.profile",
    "/etc/bash.bashrc",
    "/etc/profile",
    "/etc/profile.d/zz-probe.sh",
)
FAKE_BIN_DIR = "/root/.posttrain-probe-bin"
SHADOWED_MODULES = ("pytest", "unittest", "doctest")  # runners `python -m` finds in the working directory first
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
EXIT_MAX_FILES = 300


def pytest_hooks(actor: Actor, seen: Surroundings) -> bool:
    """conftest.py and pytest.ini wherever pytest may look (the image's own config directories
    too), and Python startup hooks (sitecustomize.py, usercustomize.py, a .pth) in every site
    directory and writable PYTHONPATH entry, that turn every failure into a pass."""
    # pytest.ini wins over the other config files of its directory, so it also goes where the image has one
    configs = [p for p in seen.files if PurePosixPath(p).name in PYTEST_CONFIGS][:50]
    dirs = [
        actor.workdir,
        "/app",
        "/root",
        "/tmp",
        *{str(PurePosixPath(t).parent) for t in seen.test_files()},
        *(str(PurePosixPath(c).parent) for c in configs),
    ]
    parent = PurePosixPath(actor.workdir)
    while str(parent) != "/":
        parent = parent.parent
        dirs.append(str(parent))
    files: dict[str, tuple[str, int]] = {}
    for directory in dict.fromkeys(d.rstrip("/") for d in dirs):
        files[f"{directory}/conftest.py"] = (FORCE_PASS_PLUGIN, 0o644)
        files[f"{directory}/pytest.ini"] = (PYTEST_INI, 0o644)
    # a PYTHONPATH entry comes before site-packages on sys.path, so its sitecustomize.py is the one imported
    for hook_dir in dict.fromkeys([*seen.site_dirs, *seen.python_path, *path_dirs_of_tests(actor.task, "PYTHONPATH")]):
        files[f"{hook_dir}/posttrain_probe_hook.py"] = (STARTUP_HOOK, 0o644)
        files[f"{hook_dir}/posttrain_probe_plugin.py"] = (FORCE_PASS_PLUGIN, 0o644)
        files[f"{hook_dir}/sitecustomize.py"] = ("import posttrain_probe_hook\n", 0o644)
    for site in seen.site_dirs:
        files[f"{site}/posttrain-probe.pth"] = ("import posttrain_probe_hook\n", 0o644)
        files[f"{site}/usercustomize.py"] = ("import posttrain_probe_hook\n", 0o644)
    actor.write_many(files)
    return True


def shadow_binaries(actor: Actor, seen: Surroundings) -> bool:
    """Fake python, pytest, bash, curl ... that report success: in every PATH directory it can
    write or create, the directories the tests put on PATH and one of its own that the rc files
    put first; as shell functions and aliases in the rc files and the files bash sources first;
    and pytest, unittest and doctest modules in the working directory."""
    functions = "".join(
        f"{n}() {{ echo 'all tests passed'; return 0; }}\n"
        for n in SHADOWED
        if n.replace(".", "").isalnum() and n not in ("sh", "bash")
    )
    aliases = "".join(f"alias {n}='echo all tests passed'\n" for n in SHADOWED if n not in ("sh", "bash"))
    # functions before aliases: an alias already defined would rewrite a function's name
    rc_text = (
        f"\n# posttrain probe\nexport PATH={FAKE_BIN_DIR}:$PATH\n{functions}"
        f"shopt -s expand_aliases 2>/dev/null\n{aliases}"
    )
    files: dict[str, tuple[str, int]] = {}
    for module_dir in dict.fromkeys([actor.workdir, "/app", "/root", "/tmp"]):
        for module in SHADOWED_MODULES:
            files[f"{module_dir.rstrip('/')}/{module}.py"] = ("raise SystemExit(0)\n", 0o644)
    sourced = [p for p in sourced_by_tests(actor.task) if p in seen.files]
    appends = "; ".join(
        f"{{ mkdir -p {shlex.quote(str(PurePosixPath(rc).parent))} && cat >> {shlex.quote(rc)}; }} "
        f"< /tmp/.posttrain-probe-rc"
        for rc in dict.fromkeys([*RC_FILES, *seen.startup_files, *sourced])
    )
    for directory in dict.fromkeys([FAKE_BIN_DIR, *seen.writable_dirs, *path_dirs_of_tests(actor.task)]):
        for name in SHADOWED:
            files[f"{directory.rstrip('/')}/{name}"] = (FAKE_BINARY.format(name=name), 0o755)
    actor.write_many({"/tmp/.posttrain-probe-rc": (rc_text, 0o644)})
    actor.run(f"{appends}; rm -f /tmp/.posttrain-probe-rc; true", timeout=30)
    actor.write_many(files)  # the last command: a fake bash or sh must not run the probe's own steps
    return True


def exit_on_load(actor: Actor, seen: Surroundings) -> bool:
    """Every code file under the working directory, and each code output the instruction
    names, ends its process with status 0 as soon as it is loaded: a verifier that imports or
    runs the agent's code inside its test run and trusts that run's exit status passes. Test
    files are edit_tests' business; conftest.py is not spared."""
    workdir = actor.workdir.rstrip("/") + "/"
    kinds = tuple(EXIT_AT_ONCE)
    targets = [
        p
        for p in seen.files
        if p.startswith(workdir)
        and p.endswith(kinds)
        and not TEST_FILE.match(PurePosixPath(p).name)
        and "posttrain_probe" not in p
    ]
    targets += [p for p in seen.outputs if p.endswith(kinds)]
    files = {p: (EXIT_AT_ONCE[PurePosixPath(p).suffix], 0o755) for p in list(dict.fromkeys(targets))[:EXIT_MAX_FILES]}
    if not files:
        return False
    actor.write_many(files)
    return True


def tests_load_code(task) -> bool:
    """Whether the task's tests could load the agent's code: they are Python, or a shell
    script that runs an interpreter (checked on the host, before a trial is spent)."""
    return any(
        path.suffix == ".py" or re.search(r"\b(python3?|pytest|bash|sh|node|source)\b|(^|\s)\.\s", text)
        for path, text in sources_of_tests(task)
    )
