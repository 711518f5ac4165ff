"""Permissions and find: make a script executable, chmod what find selects, audit and fix
world-writable files."""

from __future__ import annotations

import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words


def _script(rng: random.Random) -> str:
    return f"#!/bin/bash\necho {rng.choice(words(rng, 1))} {rng.randint(1, 99)}\n"


def chmod_one(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    content = _script(rng)
    checks = VerifierTests()
    checks.unchanged(layout.path(script), content)
    checks.add("owner_can_run", f"assert mode({layout.path(script)!r}) & stat.S_IXUSR")
    return TaskParts(
        instruction=Spec(goal=f"make the script {layout.show(script)} executable"),
        files={script: content},
        tests=checks.render(),
        steps=[f"chmod +x {layout.sh(script)}"],
    )


def chmod_found(rng: random.Random, layout: Layout) -> TaskParts:
    tool = layout.folder(rng.choice(("tools", "scripts", "bin-src")), "shell tools")
    names = words(rng, 6)
    scripts = [f"{tool}/{names[0]}.sh", f"{tool}/{names[1]}/{names[2]}.sh", f"{tool}/{names[1]}/deep/{names[3]}.sh"]
    plain = [f"{tool}/{names[4]}.txt", f"{tool}/{names[1]}/{names[5]}.conf"]
    files = {p: _script(rng) for p in scripts} | {p: f"{rng.randint(1, 9)}\n" for p in plain}
    checks = VerifierTests()
    for path, content in files.items():  # a rewritten file could come out executable too
        checks.unchanged(layout.path(path), content)
    for path in scripts:
        checks.add("executable", f"assert mode({layout.path(path)!r}) & stat.S_IXUSR")
    for path in plain:
        checks.add("not_executable", f"assert mode({layout.path(path)!r}) & 0o111 == 0")
    return TaskParts(
        instruction=Spec(
            goal=f"make every .sh file under {layout.show(tool)} (at any depth) executable",
            notes=["Other files must stay non-executable."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"find {layout.sh(tool)} -name '*.sh' -exec chmod +x {{}} +"],
    )


def world_writable(rng: random.Random, layout: Layout) -> TaskParts:
    names = words(rng, 5)
    paths = [
        f"share/{names[0]}.txt",
        f"share/{names[1]} notes.txt",
        f"share/{names[2]}/{names[3]}.cfg",
        f"share/{names[4]}.md",
    ]
    files = {p: f"{' '.join(words(rng, 3))}\n" for p in paths}
    risky = sorted(rng.sample(paths, 2))
    checks = VerifierTests()
    checks.lines(layout.path("audit/world_writable.txt"), sorted(layout.path(p) for p in risky))
    for path in paths:
        checks.add("mode", f"assert mode({layout.path(path)!r}) == 0o644")
    return TaskParts(
        instruction=Spec(
            goal=f"write the full paths of the world-writable files under {layout.show('share')} to "
            f"{layout.show('audit/world_writable.txt')}, then remove write permission for others from them",
            output="absolute paths, sorted, one per line",
            notes=[f"{layout.show('audit')} does not exist yet."],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('audit')}",
            f"find {layout.sh('share')} -type f -perm -o+w | sort > {layout.sh('audit/world_writable.txt')}",
            f"find {layout.sh('share')} -type f -perm -o+w -exec chmod o-w {{}} +",
        ],
        setup=["chmod o+w " + " ".join(shlex.quote(layout.path(p)) for p in risky)],
    )


FAMILY = Family(
    name="permissions-find",
    skill="read and change file permissions; select files with find",
    templates={
        1: (Template("chmod-one", "chmod one script", chmod_one),),
        2: (Template("chmod-found", "chmod every file find selects by name, at any depth", chmod_found),),
        3: (
            Template(
                "world-writable",
                "list the world-writable files (a name with a space) into a new folder, then fix them",
                world_writable,
            ),
        ),
    },
)
