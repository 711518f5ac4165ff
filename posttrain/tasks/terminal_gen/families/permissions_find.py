"""Permissions and find: make a script executable, chmod what find selects, audit and fix
world-writable files."""

from __future__ import annotations

import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words


def _script(rng: random.Random) -> str:
    return f"#!/bin/bash\necho {rng.choice(words(rng, 1))} {rng.randint(1, 99)}\n"


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests()
    if difficulty == 1:
        script = f"/app/{stem(rng)}.sh"
        content = _script(rng)
        checks.unchanged(script, content)
        checks.add("owner_can_run", f"assert mode({script!r}) & stat.S_IXUSR")
        return TaskParts(
            instruction=f"Make the script {script} executable.",
            files={script.removeprefix("/app/"): content},
            tests=checks.render(),
            steps=[f"chmod +x {script}"],
        )
    if difficulty == 2:
        tool = rng.choice(("tools", "scripts", "bin-src"))
        names = words(rng, 6)
        scripts = [f"{tool}/{names[0]}.sh", f"{tool}/{names[1]}/{names[2]}.sh", f"{tool}/{names[1]}/deep/{names[3]}.sh"]
        plain = [f"{tool}/{names[4]}.txt", f"{tool}/{names[1]}/{names[5]}.conf"]
        files = {p: _script(rng) for p in scripts} | {p: f"{rng.randint(1, 9)}\n" for p in plain}
        for path, content in files.items():  # a rewritten file could come out executable too
            checks.unchanged(f"/app/{path}", content)
        for path in scripts:
            checks.add("executable", f"assert mode('/app/{path}') & stat.S_IXUSR")
        for path in plain:
            checks.add("not_executable", f"assert mode('/app/{path}') & 0o111 == 0")
        return TaskParts(
            instruction=f"Make every .sh file under /app/{tool} (at any depth) executable. Other files must stay "
            "non-executable.",
            files=files,
            tests=checks.render(),
            steps=[f"find /app/{tool} -name '*.sh' -exec chmod +x {{}} +"],
        )
    names = words(rng, 5)
    paths = [
        f"share/{names[0]}.txt",
        f"share/{names[1]} notes.txt",
        f"share/{names[2]}/{names[3]}.cfg",
        f"share/{names[4]}.md",
    ]
    files = {p: f"{' '.join(words(rng, 3))}\n" for p in paths}
    risky = sorted(rng.sample(paths, 2))
    checks.lines("/app/audit/world_writable.txt", sorted(f"/app/{p}" for p in risky))
    for path in paths:
        checks.add("mode", f"assert mode('/app/{path}') == 0o644")
    return TaskParts(
        instruction="Some files under /app/share are world-writable. Write their full paths, sorted, one per line, "
        "to /app/audit/world_writable.txt (/app/audit does not exist yet), then remove write permission for others "
        "from them.",
        files=files,
        tests=checks.render(),
        steps=[
            "mkdir -p /app/audit",
            "find /app/share -type f -perm -o+w | sort > /app/audit/world_writable.txt",
            "find /app/share -type f -perm -o+w -exec chmod o-w {} +",
        ],
        setup=["chmod o+w " + " ".join(shlex.quote(f"/app/{p}") for p in risky)],
    )


FAMILY = Family(
    name="permissions-find",
    skill="read and change file permissions; select files with find",
    levels=(
        "chmod one script",
        "chmod every file find selects by name, at any depth",
        "list the world-writable files (a name with a space) into a new folder, then fix them",
    ),
    build=build,
)
