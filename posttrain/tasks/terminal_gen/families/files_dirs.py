"""Files and directories: rename, move, copy, join, delete and organise files in a tree."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words


def _text(rng: random.Random) -> str:
    return "".join(f"{w} {rng.randint(1, 999)}\n" for w in words(rng, rng.randint(3, 6)))


# ---- difficulty 1: one command -------------------------------------------------------------


def rename(rng: random.Random, layout: Layout) -> TaskParts:
    old, new = stem(rng), stem(rng) + "_final"
    content = _text(rng)
    checks = VerifierTests()
    checks.unchanged(layout.path(f"{new}.txt"), content)
    checks.add("old_name_gone", f"assert not Path({layout.path(f'{old}.txt')!r}).exists()")
    return TaskParts(
        instruction=Spec(goal=f"rename the file {layout.show(f'{old}.txt')} to {layout.show(f'{new}.txt')}"),
        files={f"{old}.txt": content},
        tests=checks.render(),
        steps=[f"mv {layout.sh(f'{old}.txt')} {layout.sh(f'{new}.txt')}"],
    )


def make_dirs(rng: random.Random, layout: Layout) -> TaskParts:
    parts = [layout.folder(w, f"{w} files") if i == 1 else w for i, w in enumerate(words(rng, 3))]
    nested = "/".join(parts)
    keep = f"{stem(rng)}.txt"
    content = _text(rng)
    checks = VerifierTests()
    checks.add("nested_dir", f"assert Path({layout.path(nested)!r}).is_dir()")
    checks.add("nothing_inside", f"assert os.listdir({layout.path(nested)!r}) == []")
    checks.unchanged(layout.path(keep), content)
    return TaskParts(
        instruction=Spec(
            goal=f"create the directory {layout.show(nested)}, with any parent directories it needs",
            output="an empty directory",
        ),
        files={keep: content},
        tests=checks.render(),
        steps=[f"mkdir -p {layout.sh(nested)}"],
    )


def delete_one(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("tmp", "scratch files")
    names = [f"{w}.txt" for w in words(rng, 4)]
    files = {f"{folder}/{n}": _text(rng) for n in names}
    victim = f"{folder}/{names[rng.randrange(len(names))]}"
    checks = VerifierTests()
    checks.add("deleted", f"assert not Path({layout.path(victim)!r}).exists()")
    for path, content in files.items():
        if path != victim:
            checks.unchanged(layout.path(path), content)
    return TaskParts(
        instruction=Spec(
            goal=f"delete the file {layout.show(victim)}",
            notes=[f"Keep the other files in {layout.show(folder)}."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"rm {layout.sh(victim)}"],
    )


def copy_to_backup(rng: random.Random, layout: Layout) -> TaskParts:
    name = f"{stem(rng)}.conf"
    backup = layout.folder("backup", "old copies")
    content = _text(rng)
    checks = VerifierTests()
    checks.unchanged(layout.path(name), content)
    checks.unchanged(layout.path(f"{backup}/{name}.bak"), content)
    return TaskParts(
        instruction=Spec(
            goal=f"copy {layout.show(name)} into the existing directory {layout.show(backup)} as {name}.bak",
            notes=["Keep the original file where it is."],
        ),
        files={name: content, f"{backup}/README": "backups live here\n"},
        tests=checks.render(),
        steps=[f"cp {layout.sh(name)} {layout.sh(f'{backup}/{name}.bak')}"],
    )


# ---- difficulty 2: a few files at once ------------------------------------------------------


def move_by_extension(rng: random.Random, layout: Layout) -> TaskParts:
    ext, other = rng.choice([("log", "txt"), ("csv", "md"), ("bak", "conf")])
    dest = rng.choice(["archive", "old", "stash"])
    work = layout.folder("work", "work files")
    names = words(rng, rng.randint(4, 7))
    moved = {f"{n}.{ext}": _text(rng) for n in names[:-2]}
    kept = {f"{n}.{other}": _text(rng) for n in names[-2:]}
    checks = VerifierTests()
    checks.add("moved", f"assert sorted(os.listdir({layout.path(dest)!r})) == {sorted(moved)!r}")
    checks.add("left_behind", f"assert sorted(os.listdir({layout.path(work)!r})) == {sorted(kept)!r}")
    for name, content in moved.items():
        checks.unchanged(layout.path(f"{dest}/{name}"), content)
    return TaskParts(
        instruction=Spec(
            goal=f"move every .{ext} file from {layout.show(work)} into a new directory {layout.show(dest)}",
            notes=[f"Leave the other files in {layout.show(work)}."],
        ),
        files={f"{work}/{n}": c for n, c in {**moved, **kept}.items()},
        tests=checks.render(),
        steps=[f"mkdir -p {layout.sh(dest)} && mv {layout.sh(work)}/*.{ext} {layout.sh(dest)}/"],
    )


def join_files(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("parts", "chapter parts")
    names = [f"{w}.txt" for w in words(rng, rng.randint(3, 4))]
    files = {f"{folder}/{n}": _text(rng) for n in names}
    order = rng.sample(names, len(names))  # not the alphabetical order a glob would give
    out = f"{stem(rng)}_joined.txt"
    checks = VerifierTests()
    checks.add(
        "joined", f"assert Path({layout.path(out)!r}).read_text() == {''.join(files[f'{folder}/{n}'] for n in order)!r}"
    )
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
    return TaskParts(
        instruction=Spec(
            goal=f"join the files {', '.join(order)} of {layout.show(folder)}, in that order, into one new file "
            f"{layout.show(out)}",
            output="their contents one after another, nothing added",
            notes=["Keep the parts as they are."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"cd {layout.sh(folder)} && cat {' '.join(order)} > {layout.sh(out)}"],
    )


def delete_empty(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("uploads", "incoming uploads")
    names = words(rng, rng.randint(5, 8))
    empty = names[: rng.randint(2, len(names) - 2)]
    files = {f"{folder}/{n}.dat": "" if n in empty else _text(rng) for n in names}
    checks = VerifierTests()
    kept = sorted(f"{n}.dat" for n in names if n not in empty)
    checks.add("only_nonempty_left", f"assert sorted(os.listdir({layout.path(folder)!r})) == {kept!r}")
    for path, content in files.items():
        if content:
            checks.unchanged(layout.path(path), content)
    return TaskParts(
        instruction=Spec(
            goal=f"delete every empty file in {layout.show(folder)}",
            notes=["Files that hold something stay as they are."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"find {layout.sh(folder)} -type f -empty -delete"],
    )


def change_extension(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("notes", "meeting notes")
    names = words(rng, rng.randint(3, 6))
    files = {f"{folder}/{n}.txt": _text(rng) for n in names}
    other = f"{folder}/{stem(rng)}.csv"
    files[other] = _text(rng)
    checks = VerifierTests()
    expected = sorted([f"{n}.md" for n in names] + [other.rsplit("/", 1)[1]])
    checks.add("renamed", f"assert sorted(os.listdir({layout.path(folder)!r})) == {expected!r}")
    for n in names:
        checks.unchanged(layout.path(f"{folder}/{n}.md"), files[f"{folder}/{n}.txt"])
    return TaskParts(
        instruction=Spec(
            goal=f"rename every .txt file in {layout.show(folder)} so that it ends in .md instead",
            notes=["Keep the rest of each name, and leave files of other types alone."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f'cd {layout.sh(folder)} && for f in *.txt; do mv "$f" "${{f%.txt}}.md"; done'],
    )


# ---- difficulty 3: a tree, a name with a space, a directory that does not exist yet --------


def collect_nested(rng: random.Random, layout: Layout) -> TaskParts:
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
    dest = f"collected/{year}"
    checks = VerifierTests()
    checks.add("collected", f"assert sorted(os.listdir({layout.path(dest)!r})) == {sorted(collected)!r}")
    for name, content in collected.items():
        checks.unchanged(layout.path(f"{dest}/{name}"), content)
    for path, content in {**found, **others}.items():
        checks.unchanged(layout.path(f"reports/{path}"), content)
    return TaskParts(
        instruction=Spec(
            goal=f"copy every .csv file under {layout.show('reports')} (at any depth) into {layout.show(dest)}/, "
            "keeping each file name",
            notes=[f"Copy only the .csv files; leave {layout.show('reports')} as it is."],
        ),
        files={f"reports/{p}": c for p, c in {**found, **others}.items()},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh(dest)}",
            f"find {layout.sh('reports')} -name '*.csv' -exec cp {{}} {layout.sh(dest)}/ \\;",
        ],
    )


def sort_by_extension(rng: random.Random, layout: Layout) -> TaskParts:
    inbox = layout.folder("inbox", "downloads inbox")
    names = words(rng, 7)
    exts = ("csv", "txt", "json")
    files = {f"{n}.{exts[i % 3]}": _text(rng) for i, n in enumerate(names[:-1])}
    spaced = f"{names[-1]} copy.{exts[rng.randrange(3)]}"  # the trap for an unquoted loop
    files[spaced] = _text(rng)
    checks = VerifierTests()
    checks.add("only_subdirectories_left", f"assert sorted(os.listdir({layout.path(inbox)!r})) == {sorted(exts)!r}")
    for ext in exts:
        inside = sorted(n for n in files if n.endswith(f".{ext}"))
        checks.add(f"sorted_{ext}", f"assert sorted(os.listdir({layout.path(f'{inbox}/{ext}')!r})) == {inside!r}")
    for name, content in files.items():
        checks.unchanged(layout.path(f"{inbox}/{name.rsplit('.', 1)[1]}/{name}"), content)
    return TaskParts(
        instruction=Spec(
            goal=f"sort the files of {layout.show(inbox)} into subdirectories named after their extension",
            inputs=[f"{layout.show(inbox)} holds .csv, .txt and .json files"],
            output=f"{layout.show(inbox)}/csv/, {layout.show(inbox)}/txt/ and {layout.show(inbox)}/json/, each "
            "holding the files of that extension, and no file left directly in the inbox",
        ),
        files={f"{inbox}/{n}": c for n, c in files.items()},
        tests=checks.render(),
        steps=[
            f"cd {layout.sh(inbox)} && mkdir -p csv txt json",
            f'cd {layout.sh(inbox)} && for f in *.*; do mv "$f" "${{f##*.}}/"; done',
        ],
    )


def count_per_folder(rng: random.Random, layout: Layout) -> TaskParts:
    names = words(rng, 4)
    folders = [names[0], f"{names[1]} archive", names[2]]  # one with a space
    files: dict[str, str] = {}
    counts: dict[str, int] = {}
    for folder in folders:
        n = rng.randint(1, 5)
        counts[folder] = n
        for i in range(n):
            depth = f"sub{i}/" if i % 2 else ""
            files[f"projects/{folder}/{depth}{stem(rng)}_{i}.txt"] = _text(rng)
    out = "file_counts.txt"
    checks = VerifierTests()
    checks.lines(layout.path(out), [f"{f}: {counts[f]}" for f in sorted(folders)])
    return TaskParts(
        instruction=Spec(
            goal=f"count the files (at any depth) in each directory directly under {layout.show('projects')}, and "
            f"write the counts to {layout.show(out)}",
            output="one line per directory, 'name: count', sorted by name",
            notes=["Count regular files only, not directories."],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f'cd {layout.sh("projects")} && for d in */; do d="${{d%/}}"; '
            f'echo "$d: $(find "$d" -type f | wc -l)"; done | sort > {layout.sh(out)}'
        ],
    )


def backup_without_temp(rng: random.Random, layout: Layout) -> TaskParts:
    src = layout.folder("site", "web site")
    names = words(rng, 6)
    files = {
        f"{src}/index.html": "<h1>hi</h1>\n",
        f"{src}/{names[0]}/{names[1]}.css": _text(rng),
        f"{src}/{names[0]}/{names[2]}.tmp": _text(rng),
        f"{src}/{names[3]} pages/{names[4]}.html": _text(rng),
        f"{src}/{names[5]}.tmp": _text(rng),
    }
    backup = f"backups/{src.replace(' ', '_')}"
    checks = VerifierTests()
    kept = sorted(p.removeprefix(f"{src}/") for p in files if not p.endswith(".tmp"))
    checks.add(
        "backup_tree",
        f"base = Path({layout.path(backup)!r})\n"
        f"assert sorted(str(p.relative_to(base)) for p in base.rglob('*') if p.is_file()) == {kept!r}",
    )
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
        if not path.endswith(".tmp"):
            checks.unchanged(layout.path(f"{backup}/{path.removeprefix(src + '/')}"), content)
    return TaskParts(
        instruction=Spec(
            goal=f"copy the whole tree {layout.show(src)} to a new directory {layout.show(backup)}, leaving out "
            "every .tmp file",
            output="the same subdirectories and files under the new directory, minus the .tmp files",
            notes=[f"Leave {layout.show(src)} itself unchanged, .tmp files included."],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('backups')} && cp -r {layout.sh(src)} {layout.sh(backup)}",
            f"find {layout.sh(backup)} -name '*.tmp' -delete",
        ],
    )


FAMILY = Family(
    name="files-dirs",
    skill="create, move, rename, copy, join and delete files and directories",
    templates={
        1: (
            Template("rename", "rename one file", rename),
            Template("make-dirs", "create a nested directory", make_dirs),
            Template("delete-one", "delete one file among others", delete_one),
            Template("copy-to-backup", "copy a file under a new name into a directory", copy_to_backup),
        ),
        2: (
            Template("move-by-extension", "move the files of one extension into a new directory", move_by_extension),
            Template("join-files", "concatenate files in a given order", join_files),
            Template("delete-empty", "delete the empty files of a directory", delete_empty),
            Template("change-extension", "rename every file of one extension to another", change_extension),
        ),
        3: (
            Template(
                "collect-nested",
                "copy matching files from a nested tree (a name with a space) into a new directory",
                collect_nested,
            ),
            Template(
                "sort-by-extension",
                "sort files into per-extension directories (a name with a space)",
                sort_by_extension,
            ),
            Template("count-per-folder", "count files per subdirectory (one with a space)", count_per_folder),
            Template("backup-without-temp", "copy a tree leaving out temporary files", backup_without_temp),
        ),
    },
)
