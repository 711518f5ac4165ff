"""Files and directories: rename, move by pattern, collect from a tree into a new directory."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words


def _text(rng: random.Random) -> str:
    return "".join(f"{w} {rng.randint(1, 999)}\n" for w in words(rng, rng.randint(3, 6)))


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests()
    if difficulty == 1:
        old, new = stem(rng), stem(rng) + "_final"
        content = _text(rng)
        checks.unchanged(f"/app/{new}.txt", content)
        checks.add("old_name_gone", f"assert not Path('/app/{old}.txt').exists()")
        return TaskParts(
            instruction=f"Rename the file /app/{old}.txt to /app/{new}.txt.",
            files={f"{old}.txt": content},
            tests=checks.render(),
            steps=[f"mv /app/{old}.txt /app/{new}.txt"],
        )
    if difficulty == 2:
        ext, other = rng.choice([("log", "txt"), ("csv", "md"), ("bak", "conf")])
        dest = rng.choice(["archive", "old", "stash"])
        names = words(rng, rng.randint(4, 7))
        moved = {f"{n}.{ext}": _text(rng) for n in names[:-2]}
        kept = {f"{n}.{other}": _text(rng) for n in names[-2:]}
        checks.add("moved", f"assert sorted(os.listdir('/app/{dest}')) == {sorted(moved)!r}")
        checks.add("left_behind", f"assert sorted(os.listdir('/app/work')) == {sorted(kept)!r}")
        for name, content in moved.items():
            checks.unchanged(f"/app/{dest}/{name}", content)
        return TaskParts(
            instruction=f"Move every .{ext} file from /app/work into a new directory /app/{dest}. "
            f"Leave the other files in /app/work.",
            files={f"work/{n}": c for n, c in {**moved, **kept}.items()},
            tests=checks.render(),
            steps=[f"mkdir -p /app/{dest} && mv /app/work/*.{ext} /app/{dest}/"],
        )
    year = rng.randint(2019, 2025)
    names = words(rng, 5)
    # spread over nested folders, one name with a space: the trap for an unquoted loop
    found = {
        f"{names[0]}/{names[1]} report.csv": _text(rng),
        f"{names[0]}/q{rng.randint(1, 4)}/{names[2]}.csv": _text(rng),
        f"{names[3]}.csv": _text(rng),
    }
    others = {f"{names[0]}/{names[4]}.txt": _text(rng), f"{names[3]}.json": "{}\n"}
    collected = {path.rsplit("/", 1)[-1]: content for path, content in found.items()}
    checks.add("collected", f"assert sorted(os.listdir('/app/collected/{year}')) == {sorted(collected)!r}")
    for name, content in collected.items():
        checks.unchanged(f"/app/collected/{year}/{name}", content)
    for path, content in {**found, **others}.items():
        checks.unchanged(f"/app/reports/{path}", content)
    return TaskParts(
        instruction=f"Copy every .csv file under /app/reports (at any depth) into /app/collected/{year}/, "
        "keeping each file name. Copy only the .csv files; leave /app/reports as it is.",
        files={f"reports/{p}": c for p, c in {**found, **others}.items()},
        tests=checks.render(),
        steps=[
            f"mkdir -p /app/collected/{year}",
            f"find /app/reports -name '*.csv' -exec cp {{}} /app/collected/{year}/ \\;",
        ],
    )


FAMILY = Family(
    name="files-dirs",
    skill="create, move, rename and copy files and directories",
    levels=(
        "rename one file",
        "move the files of one extension into a new directory",
        "copy matching files from a nested tree (a name with a space) into a new directory",
    ),
    build=build,
)
