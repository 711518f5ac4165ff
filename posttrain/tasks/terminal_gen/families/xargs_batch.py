"""Batch work over file lists with xargs: delete, copy, move or read the files a list names,
run a command per line, and handle the files `find` matches (names with spaces via -0 and -d)."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words

GZIP_HELPERS = """
import gzip


def gunzipped(path):
    return gzip.decompress(Path(path).read_bytes()).decode()
"""
LISTED = "one file name per line, relative to"


def _text(rng: random.Random) -> str:
    return "".join(f"{w} {rng.randint(1, 999)}\n" for w in words(rng, rng.randint(2, 5)))


def _files(rng: random.Random, folder: str, names: list[str]) -> dict[str, str]:
    return {f"{folder}/{n}": _text(rng) for n in names}


def _split(rng: random.Random, names: list[str]) -> tuple[list[str], list[str]]:
    """(the names a list picks, in a shuffled order; the rest), both non-empty."""
    picked = rng.sample(names, rng.randint(2, len(names) - 1))
    return picked, [n for n in names if n not in picked]


def _spaced_names(rng: random.Random, n: int, ext: str) -> list[str]:
    """`n` names, at least one of them with a space."""
    chosen = words(rng, n + 1)
    return [f"{a} {chosen[-1]}.{ext}" if i == 0 else f"{a}.{ext}" for i, a in enumerate(chosen[:n])]


def _split_spaced(rng: random.Random, names: list[str]) -> tuple[list[str], list[str]]:
    """Like `_split`, but the picked names include the first (the one with a space)."""
    picked = [names[0], *rng.sample(names[1:-1], rng.randint(1, len(names) - 2))]
    rng.shuffle(picked)
    return picked, [n for n in names if n not in picked]


def _leave_alone(checks: VerifierTests, layout: Layout, files: dict[str, str], keep: list[str]) -> None:
    for path in keep:
        checks.unchanged(layout.path(path), files[path])


def _gone(checks: VerifierTests, layout: Layout, paths: list[str]) -> None:
    checks.add("listed_gone", f"assert not any(Path(p).exists() for p in {[layout.path(p) for p in paths]!r})")


# ---- difficulty 1: one command -------------------------------------------------------------


def _delete_from_list(
    layout: Layout, folder: str, files: dict[str, str], split: tuple[list[str], list[str]], listing: str, header: str
) -> TaskParts:
    """Delete the files of `folder` a list names; `header`: a comment line the list starts with
    (then names hold spaces), or "" (then they do not)."""
    doomed, kept = split
    files[listing] = header + "".join(n + "\n" for n in doomed)
    checks = VerifierTests()
    _gone(checks, layout, [f"{folder}/{n}" for n in doomed])
    _leave_alone(checks, layout, files, [f"{folder}/{n}" for n in kept] + [listing])
    given = f"{layout.show(listing)} {'starts with a comment line, then ' if header else ''}holds {LISTED}"
    spaced = any(" " in n for n in doomed)
    xargs = "xargs -d '\\n' rm --" if spaced else "xargs rm --"
    read = f"tail -n +2 {layout.sh(listing)} | {xargs}" if header else f"{xargs} < {layout.sh(listing)}"
    return TaskParts(
        instruction=Spec(
            goal=f"delete the files that {layout.show(listing)} names",
            inputs=[f"{given} {layout.show(folder)}"],
            notes=[*(["Some names contain spaces."] if spaced else []), "Keep the list and the other files."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"cd {layout.sh(folder)} && {read}"],
    )


def delete_listed(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("cache", "old cache")
    names = [f"{w}.tmp" for w in words(rng, rng.randint(4, 7))]
    files = _files(rng, folder, names)
    return _delete_from_list(layout, folder, files, _split(rng, names), "delete_me.txt", "")


def dirs_from_list(rng: random.Random, layout: Layout) -> TaskParts:
    names = [stem(rng).replace("_", "-") for _ in range(rng.randint(3, 6))]
    names = list(dict.fromkeys(names))
    base = layout.folder("projects", "client projects")
    listing = "".join(n + "\n" for n in names)
    checks = VerifierTests()
    old = f"{base}/archive/README"
    checks.add("dirs", f"assert sorted(os.listdir({layout.path(base)!r})) == {sorted([*names, 'archive'])!r}")
    checks.add("are_dirs", f"assert all(Path({layout.path(base)!r}, n).is_dir() for n in {names!r})")
    checks.unchanged(layout.path("names.txt"), listing)
    checks.unchanged(layout.path(old), "older projects\n")
    return TaskParts(
        instruction=Spec(
            goal=f"create one directory in {layout.show(base)} for every name listed in {layout.show('names.txt')}",
            inputs=[f"{layout.show('names.txt')} holds one name per line"],
            output="empty directories named exactly as the lines",
            notes=[f"Leave the archive folder in {layout.show(base)} as it is."],
        ),
        files={"names.txt": listing, old: "older projects\n"},
        tests=checks.render(),
        steps=[f"cd {layout.sh(base)} && xargs mkdir -p < {layout.sh('names.txt')}"],
    )


def cat_listed(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("chapters", "book chapters")
    names = [f"{w}.md" for w in words(rng, rng.randint(4, 6))]
    files = _files(rng, folder, names)
    order, _ = _split(rng, names)
    files["order.txt"] = "".join(n + "\n" for n in order)
    out = f"{stem(rng)}_book.md"
    checks = VerifierTests()
    joined = "".join(files[f"{folder}/{n}"] for n in order)
    checks.add("joined", f"assert Path({layout.path(out)!r}).read_text() == {joined!r}")
    _leave_alone(checks, layout, files, list(files))
    return TaskParts(
        instruction=Spec(
            goal=f"join the files that {layout.show('order.txt')} lists, in its order, into {layout.show(out)}",
            inputs=[f"{layout.show('order.txt')} holds {LISTED} {layout.show(folder)}"],
            output="their contents one after another, nothing added",
        ),
        files=files,
        tests=checks.render(),
        steps=[f"cd {layout.sh(folder)} && xargs cat < {layout.sh('order.txt')} > {layout.sh(out)}"],
    )


def gzip_found(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("logs", "server logs")
    names = words(rng, rng.randint(4, 6))
    logs = [f"{n}.log" if i % 3 else f"{names[-1]}/{n}.log" for i, n in enumerate(names[:-1])]
    other = f"{stem(rng)}.txt"
    files = _files(rng, folder, logs + [other])
    checks = VerifierTests(GZIP_HELPERS)
    for name in logs:
        path = f"{folder}/{name}"
        checks.add("compressed", f"assert gunzipped({layout.path(path + '.gz')!r}) == {files[path]!r}")
    _gone(checks, layout, [f"{folder}/{n}" for n in logs])
    _leave_alone(checks, layout, files, [f"{folder}/{other}"])
    return TaskParts(
        instruction=Spec(
            goal=f"compress every .log file under {layout.show(folder)}, in every subfolder too, with gzip",
            output="each file.log replaced by file.log.gz",
            notes=["Leave the other files as they are."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"find {layout.sh(folder)} -name '*.log' -print0 | xargs -0 gzip"],
    )


# ---- difficulty 2: up to two steps -----------------------------------------------------------


def copy_listed(rng: random.Random, layout: Layout) -> TaskParts:
    folder, dest = layout.folder("photos", "camera roll"), rng.choice(("picked", "selected", "keepers"))
    names = [f"{w}.jpg" for w in words(rng, rng.randint(4, 7))]
    files = _files(rng, folder, names)
    picked, _ = _split(rng, names)
    files["picks.txt"] = "".join(n + "\n" for n in picked)
    checks = VerifierTests()
    checks.add("copied", f"assert sorted(os.listdir({layout.path(dest)!r})) == {sorted(picked)!r}")
    for name in picked:
        checks.unchanged(layout.path(f"{dest}/{name}"), files[f"{folder}/{name}"])
    _leave_alone(checks, layout, files, list(files))
    return TaskParts(
        instruction=Spec(
            goal=f"copy the files that {layout.show('picks.txt')} names into a new directory {layout.show(dest)}",
            inputs=[f"{layout.show('picks.txt')} holds {LISTED} {layout.show(folder)}"],
            notes=["The originals stay where they are."],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh(dest)}",
            f"cd {layout.sh(folder)} && xargs cp -t {layout.sh(dest)} < {layout.sh('picks.txt')}",
        ],
    )


def files_with_word(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("notes", "team notes")
    pool = words(rng, 8)
    word = pool[0]
    names = [f"{w}.txt" for w in words(rng, rng.randint(5, 8))]
    files = {f"{folder}/{n}": " ".join(rng.sample(pool[1:], 4)) + "\n" for n in names}
    hits = sorted(rng.sample(names, rng.randint(1, len(names) - 2)))
    for name in hits:
        files[f"{folder}/{name}"] += f"see {word} later\n"
    files[f"{folder}/{stem(rng)}.bak"] = f"{word}\n"  # matches the word, but is not a .txt file
    checks = VerifierTests()
    checks.lines(layout.path("matches.txt"), hits)
    _leave_alone(checks, layout, files, list(files))
    return TaskParts(
        instruction=Spec(
            goal=f"find the .txt files in {layout.show(folder)} that contain the word {word}, and write their "
            f"names to {layout.show('matches.txt')}",
            output="one bare file name per line, sorted alphabetically",
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"cd {layout.sh(folder)} && find . -name '*.txt' -print0 | xargs -0 grep -lw {word} "
            f"| sed 's|^\\./||' | sort > {layout.sh('matches.txt')}"
        ],
    )


def dirs_with_readme(rng: random.Random, layout: Layout) -> TaskParts:
    names = list(dict.fromkeys(w.capitalize() for w in words(rng, rng.randint(3, 5))))
    base = layout.folder("modules", "new modules")
    listing = "".join(n + "\n" for n in names)
    checks = VerifierTests()
    checks.add("dirs", f"assert sorted(os.listdir({layout.path(base)!r})) == {sorted(names)!r}")
    for name in names:
        checks.add("readme", f"assert Path({layout.path(f'{base}/{name}/README')!r}).is_file()")
    checks.unchanged(layout.path("modules.txt"), listing)
    return TaskParts(
        instruction=Spec(
            goal=f"for every name in {layout.show('modules.txt')}, create a directory of that name in a new "
            f"directory {layout.show(base)} holding an empty file README",
            inputs=[f"{layout.show('modules.txt')} holds one name per line"],
        ),
        files={"modules.txt": listing},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh(base)} && cd {layout.sh(base)} && xargs mkdir -p < {layout.sh('modules.txt')}",
            f"cd {layout.sh(base)} && xargs -I{{}} touch {{}}/README < {layout.sh('modules.txt')}",
        ],
    )


def delete_spaced(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("downloads", "old downloads")
    names = _spaced_names(rng, rng.randint(4, 6), "pdf")
    files = _files(rng, folder, names)
    return _delete_from_list(layout, folder, files, _split_spaced(rng, names), "remove.txt", "")


# ---- difficulty 3: names with spaces, a header line, a folder that does not exist yet ---------


def gzip_spaced_tree(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("exports", "monthly exports")
    names = _spaced_names(rng, rng.randint(3, 5), "csv")
    sub = f"{rng.choice(('q1', 'q2', 'q3'))} data"
    csvs = [n if i % 2 else f"{sub}/{n}" for i, n in enumerate(names)]
    keep = [f"{stem(rng)}.csv.bak", f"{sub}/notes.txt"]
    files = _files(rng, folder, csvs + keep)
    checks = VerifierTests(GZIP_HELPERS)
    for name in csvs:
        path = f"{folder}/{name}"
        checks.add("compressed", f"assert gunzipped({layout.path(path + '.gz')!r}) == {files[path]!r}")
    _gone(checks, layout, [f"{folder}/{n}" for n in csvs])
    _leave_alone(checks, layout, files, [f"{folder}/{n}" for n in keep])
    checks.value(layout.path("compressed.txt"), str(len(csvs)))
    return TaskParts(
        instruction=Spec(
            goal=f"gzip every .csv file under {layout.show(folder)}, subfolders included, then write how many "
            f"files you compressed to {layout.show('compressed.txt')}",
            output="each file.csv replaced by file.csv.gz, and the count as just the integer",
            notes=["Some names contain spaces.", "Files that do not end in .csv stay as they are."],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"find {layout.sh(folder)} -name '*.csv' -print0 | xargs -0 gzip",
            f"find {layout.sh(folder)} -name '*.csv.gz' | wc -l > {layout.sh('compressed.txt')}",
        ],
    )


def delete_with_header(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("reports", "draft reports")
    names = _spaced_names(rng, rng.randint(4, 6), "docx")
    files = _files(rng, folder, names)
    return _delete_from_list(layout, folder, files, _split_spaced(rng, names), "cleanup.txt", "# files to remove\n")


def move_listed(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("inbox", "mail inbox")
    dest = f"{rng.choice(('archive', 'done', 'filed'))}/{rng.randint(2019, 2025)}"
    names = _spaced_names(rng, rng.randint(4, 6), "eml")
    files = _files(rng, folder, names)
    moved, kept = _split_spaced(rng, names)
    files["move.txt"] = "".join(n + "\n" for n in moved)
    checks = VerifierTests()
    checks.add("moved", f"assert sorted(os.listdir({layout.path(dest)!r})) == {sorted(moved)!r}")
    for name in moved:
        checks.unchanged(layout.path(f"{dest}/{name}"), files[f"{folder}/{name}"])
    checks.add("left", f"assert sorted(os.listdir({layout.path(folder)!r})) == {sorted(kept)!r}")
    _leave_alone(checks, layout, files, [f"{folder}/{n}" for n in kept] + ["move.txt"])
    return TaskParts(
        instruction=Spec(
            goal=f"move the files that {layout.show('move.txt')} names into {layout.show(dest)}",
            inputs=[f"{layout.show('move.txt')} holds {LISTED} {layout.show(folder)}"],
            notes=[
                f"{layout.show(dest)} does not exist yet.",
                "Some names contain spaces.",
                "Files the list does not name stay where they are.",
            ],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh(dest)}",
            f"cd {layout.sh(folder)} && xargs -d '\\n' mv -t {layout.sh(dest)} < {layout.sh('move.txt')}",
        ],
    )


def rename_pairs(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("scans", "scanned pages")
    target = rng.choice(("renamed", "final", "sorted"))
    names = [f"scan_{i:03d}.png" for i in rng.sample(range(1, 200), rng.randint(3, 6))]
    new = [f"{target}/{w}.png" for w in words(rng, len(names))]
    files = _files(rng, folder, names)
    extra = f"scan_{rng.randint(200, 999)}.png"
    files[f"{folder}/{extra}"] = _text(rng)
    files["renames.txt"] = "old new\n" + "".join(f"{o} {n}\n" for o, n in zip(names, new))
    checks = VerifierTests()
    for old, fresh in zip(names, new):
        checks.unchanged(layout.path(f"{folder}/{fresh}"), files[f"{folder}/{old}"])
    _gone(checks, layout, [f"{folder}/{n}" for n in names])
    _leave_alone(checks, layout, files, [f"{folder}/{extra}", "renames.txt"])
    return TaskParts(
        instruction=Spec(
            goal=f"rename the files of {layout.show(folder)} as {layout.show('renames.txt')} says",
            inputs=[
                f"{layout.show('renames.txt')} has a header line 'old new', then one 'old new' pair per line, both "
                f"relative to {layout.show(folder)}",
                f"The new names lie in the folder {layout.show(f'{folder}/{target}')}, which does not exist yet",
            ],
            notes=["Files the list does not name stay as they are."],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh(f'{folder}/{target}')}",
            f"cd {layout.sh(folder)} && tail -n +2 {layout.sh('renames.txt')} | xargs -n 2 mv",
        ],
    )


FAMILY = Family(
    name="xargs-batch",
    skill="batch work over file lists and find results with xargs (-0, -d, -I, -n)",
    templates={
        1: (
            Template("delete-listed", "delete the files a list names", delete_listed),
            Template("dirs-from-list", "one directory per line of a list", dirs_from_list),
            Template("cat-listed", "join the files a list names in its order", cat_listed),
            Template("gzip-found", "gzip every file find matches (find -print0 | xargs -0)", gzip_found),
        ),
        2: (
            Template("copy-listed", "copy the files a list names into a new folder", copy_listed),
            Template("files-with-word", "the files find matches that contain a word", files_with_word),
            Template("dirs-with-readme", "a directory per line, each with a file (xargs -I)", dirs_with_readme),
            Template("delete-spaced", "delete listed files whose names hold spaces (xargs -d)", delete_spaced),
        ),
        3: (
            Template("gzip-spaced-tree", "gzip one extension in a tree with spaces, then count", gzip_spaced_tree),
            Template("delete-with-header", "delete the files a list with a header line names", delete_with_header),
            Template("move-listed", "move listed files with spaces into a folder that does not exist", move_listed),
            Template("rename-pairs", "rename old/new pairs from a list with a header (xargs -n 2)", rename_pairs),
        ),
    },
)
