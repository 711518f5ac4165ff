"""Find by size and modification time: files bigger than N KiB, older than D days, the newest
one, those modified after a reference file. The setup commands set the times with `touch -d`,
relative to when the environment is built: a template that compares ages with a cut-off in days
(RECENT < D < OLD) holds while the built environment is younger than D - RECENT days (6 at the
least); the ones that only order files by time, or compare them with a reference file, always hold."""

from __future__ import annotations

import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import WORDS, words

# recent files are at most RECENT days old and old ones at least OLD: far from any cut-off D
# the templates ask about (RECENT < D < OLD), so the build's time of day never decides
RECENT, OLD = 1, 20


def _touch(layout: Layout, ages: dict[str, int]) -> list[str]:
    """One setup command giving each file (path under the root) an mtime `age` days back."""
    return [" && ".join(f"touch -d '{age} days ago' {shlex.quote(layout.path(p))}" for p, age in sorted(ages.items()))]


def _aged(rng: random.Random, paths: list[str], old: int) -> dict[str, int]:
    """Ages in days: the first `old` paths old, the rest recent."""
    return {p: rng.randint(OLD, OLD + 40) if i < old else rng.randint(0, RECENT) for i, p in enumerate(paths)}


def _filler(rng: random.Random, size: int) -> str:
    word = rng.choice(WORDS)
    return (word + "\n") * (size // (len(word) + 1)) + "x" * (size % (len(word) + 1))


def _sized(rng: random.Random, folder: str, n: int, big: int, ext: str = "bin") -> tuple[dict[str, str], list[str]]:
    """`n` files under `folder` (some in a subfolder), the first `big` over 40 KiB and the rest
    under 20 KiB; returns (files, the big ones)."""
    names = words(rng, n)
    sizes = rng.sample(range(41 * 1024, 90 * 1024), big) + rng.sample(range(1024, 19 * 1024), n - big)
    paths = [f"{folder}/{'more/' if i % 3 == 2 else ''}{name}.{ext}" for i, name in enumerate(names)]
    files = {p: _filler(rng, s) for p, s in zip(paths, sizes)}
    return files, paths[:big]


def _names(
    layout: Layout,
    files: dict[str, str],
    found: list[str],
    what: str,
    find: str,
    out: str,
    setup: list[str] | None = None,
) -> TaskParts:
    """A template whose answer is the sorted names (no folders) of the files `find` selects."""
    checks = VerifierTests()
    checks.lines(layout.path(out), sorted(p.rsplit("/", 1)[1] for p in found))
    spec = Spec(
        f"write the names of {what} to {layout.show(out)}",
        output="file names only, without folders, one per line, sorted alphabetically",
    )
    return TaskParts(spec, files, checks.render(), [f"{find} -printf '%f\\n' | sort > {layout.sh(out)}"], setup or [])


# ---- difficulty 1: one command -------------------------------------------------------------------


def bigger_than(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("media", "media files")
    files, big = _sized(rng, folder, rng.randint(5, 8), rng.randint(1, 3))
    out = "big_files.txt"
    checks = VerifierTests()
    checks.lines(layout.path(out), sorted(layout.path(p) for p in big))
    spec = Spec(
        goal=f"write the paths of the files under {layout.show(folder)} (at any depth) bigger than 30 KiB to "
        f"{layout.show(out)}",
        output="absolute paths, sorted, one per line",
    )
    step = f"find {layout.sh(folder)} -type f -size +30k | sort > {layout.sh(out)}"
    return TaskParts(spec, files, checks.render(), [step])


def delete_older(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("cache", "cache files")
    paths = [f"{folder}/{w}.cache" for w in words(rng, rng.randint(5, 8))]
    old = rng.randint(2, len(paths) - 2)
    ages = _aged(rng, paths, old)
    files = {p: f"{rng.getrandbits(32):08x}\n" for p in paths}
    days = rng.choice((7, 10, 14))
    checks = VerifierTests()
    checks.add("old_deleted", f"assert not any(Path(p).exists() for p in {[layout.path(p) for p in paths[:old]]!r})")
    for p in paths[old:]:
        checks.unchanged(layout.path(p), files[p])
    spec = Spec(
        goal=f"delete the files in {layout.show(folder)} that were last modified more than {days} days ago",
        notes=["Keep the newer files."],
    )
    return TaskParts(
        spec, files, checks.render(), [f"find {layout.sh(folder)} -type f -mtime +{days} -delete"], _touch(layout, ages)
    )


def move_newest(rng: random.Random, layout: Layout) -> TaskParts:
    folder, dest = layout.folder("reports", "daily reports"), "latest"
    paths = [f"{folder}/report_{w}.csv" for w in words(rng, rng.randint(4, 7))]
    ages = dict(zip(paths, rng.sample(range(1, 30), len(paths))))
    newest = min(paths, key=ages.__getitem__)
    files = {p: f"day,{ages[p]}\n" for p in paths}
    name = newest.rsplit("/", 1)[1]
    checks = VerifierTests()
    checks.unchanged(layout.path(f"{dest}/{name}"), files[newest])
    checks.add("moved_not_copied", f"assert not Path({layout.path(newest)!r}).exists()")
    for p in paths:
        if p != newest:
            checks.unchanged(layout.path(p), files[p])
    spec = Spec(
        goal=f"move the most recently modified file of {layout.show(folder)} into the existing folder "
        f"{layout.show(dest)}",
        notes=["Keep its name; the other files stay where they are."],
    )
    return TaskParts(
        spec,
        {**files, f"{dest}/.keep": ""},
        checks.render(),
        [f'mv "$(ls -t {layout.sh(folder)}/* | head -n 1)" {layout.sh(dest)}/'],
        _touch(layout, ages),
    )


def count_newer(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("src", "source files")
    paths = [f"{folder}/{w}.py" for w in words(rng, rng.randint(6, 10))]
    ref = "last_build.stamp"
    newer = rng.randint(1, len(paths) - 2)
    # the reference is 10 days old; the newer files 0-5 days, the others 15-60
    ages = {p: (rng.randint(0, 5) if i < newer else rng.randint(15, 60)) for i, p in enumerate(paths)}
    ages[ref] = 10
    files = {p: f"# {p.rsplit('/', 1)[1]}\n" for p in paths}
    files[ref] = "built\n"
    checks = VerifierTests()
    checks.value(layout.path("changed_count.txt"), str(newer))
    spec = Spec(
        goal=f"count the files in {layout.show(folder)} modified more recently than {layout.show(ref)} and write "
        f"the count to {layout.show('changed_count.txt')}",
        output="just the integer",
    )
    step = f"find {layout.sh(folder)} -type f -newer {layout.sh(ref)} | wc -l > {layout.sh('changed_count.txt')}"
    return TaskParts(spec, files, checks.render(), [step], _touch(layout, ages))


# ---- difficulty 2: a time window, a size window, a new folder, an order ---------------------------


def recent_names(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("uploads", "user uploads")
    paths = [f"{folder}/{'2024/' if i % 2 else ''}{w}.dat" for i, w in enumerate(words(rng, rng.randint(6, 9)))]
    old = rng.randint(2, len(paths) - 2)
    rng.shuffle(paths)
    ages = _aged(rng, paths, old)
    files = {p: f"{p}\n" for p in paths}
    what = f"the files under {layout.show(folder)} (at any depth) modified in the last 10 days"
    find = f"find {layout.sh(folder)} -type f -mtime -10"
    return _names(layout, files, paths[old:], what, find, "recent.txt", _touch(layout, ages))


def archive_old(rng: random.Random, layout: Layout) -> TaskParts:
    folder, dest = layout.folder("logs", "service logs"), "archive"
    paths = [f"{folder}/{w}.log" for w in words(rng, rng.randint(5, 8))]
    old = rng.randint(2, len(paths) - 1)
    ages = _aged(rng, paths, old)
    files = {p: f"{rng.choice(WORDS)} {rng.randint(1, 99)}\n" for p in paths}
    checks = VerifierTests()
    moved = sorted(p.rsplit("/", 1)[1] for p in paths[:old])
    checks.add("archived", f"assert sorted(os.listdir({layout.path(dest)!r})) == {moved!r}")
    for p in paths:
        where = f"{dest}/{p.rsplit('/', 1)[1]}" if p in paths[:old] else p
        checks.unchanged(layout.path(where), files[p])
    spec = Spec(
        goal=f"move the files of {layout.show(folder)} not modified in the last 14 days into a new folder "
        f"{layout.show(dest)}",
        notes=["Keep the recent files where they are."],
    )
    steps = [
        f"mkdir -p {layout.sh(dest)}",
        f"find {layout.sh(folder)} -type f -mtime +14 -exec mv {{}} {layout.sh(dest)}/ \\;",
    ]
    return TaskParts(spec, files, checks.render(), steps, _touch(layout, ages))


def size_window(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("images", "image files")
    names = words(rng, rng.randint(7, 10))
    # below 10 KiB, between 20 and 50, above 60: the window 15-55 KiB takes the middle ones
    sizes = [rng.choice((rng.randint(1, 9), rng.randint(20, 49), rng.randint(61, 90))) for _ in names]
    sizes[:3] = [rng.randint(1, 9), rng.randint(20, 49), rng.randint(61, 90)]
    files = {f"{folder}/{n}.png": _filler(rng, s * 1024 + 100) for n, s in zip(names, sizes)}
    inside = [f"{folder}/{n}.png" for n, s in zip(names, sizes) if 20 <= s <= 49]
    what = f"the files in {layout.show(folder)} bigger than 15 KiB and smaller than 55 KiB"
    find = f"find {layout.sh(folder)} -type f -size +15k -size -55k"
    return _names(layout, files, inside, what, find, "medium.txt")


def oldest_first(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("drafts", "draft notes")
    paths = [f"{folder}/{w}.md" for w in words(rng, rng.randint(4, 7))]
    ages = dict(zip(paths, rng.sample(range(1, 60), len(paths))))
    files = {p: f"# {p.rsplit('/', 1)[1]}\n" for p in paths}
    out = "by_age.txt"
    checks = VerifierTests()
    checks.lines(layout.path(out), [p.rsplit("/", 1)[1] for p in sorted(paths, key=ages.__getitem__, reverse=True)])
    spec = Spec(
        goal=f"list the files of {layout.show(folder)} from the oldest to the most recently modified in "
        f"{layout.show(out)}",
        output="file names only, one per line, oldest first",
    )
    return TaskParts(
        spec, files, checks.render(), [f"ls -1tr {layout.sh(folder)} > {layout.sh(out)}"], _touch(layout, ages)
    )


# ---- difficulty 3: names with spaces, a folder that does not exist yet, files to leave alone,
# a header line ---------------------------------------------------------------------------------


def purge_old_logs(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("var", "var files")
    names = words(rng, 6)
    old_logs = [f"{folder}/{names[0]}.log", f"{folder}/{names[1]} worker.log", f"{folder}/jobs/{names[2]}.log"]
    new_logs = [f"{folder}/{names[3]}.log"]
    old_other = [f"{folder}/{names[4]}.conf", f"{folder}/jobs/{names[5]}.txt"]  # old but not logs: they stay
    ages = {p: rng.randint(OLD, OLD + 30) for p in old_logs + old_other} | {p: RECENT for p in new_logs}
    files = {p: f"{p.rsplit('/', 1)[1]}\n" for p in ages}
    report = "cleanup/deleted.txt"
    checks = VerifierTests()
    checks.lines(layout.path(report), sorted(layout.path(p) for p in old_logs))
    checks.add("old_logs_gone", f"assert not any(Path(p).exists() for p in {[layout.path(p) for p in old_logs]!r})")
    for p in new_logs + old_other:
        checks.unchanged(layout.path(p), files[p])
    find = f"find {layout.sh(folder)} -type f -name '*.log' -mtime +10"
    spec = Spec(
        goal=f"delete every .log file under {layout.show(folder)} (at any depth) older than 10 days, after writing "
        f"their paths to {layout.show(report)}",
        output="absolute paths, sorted, one per line",
        notes=[
            f"{layout.show('cleanup')} does not exist yet.",
            "Old files that are not .log files stay, and so do recent logs; some names contain spaces.",
        ],
    )
    steps = [f"mkdir -p {layout.sh('cleanup')}", f"{find} | sort > {layout.sh(report)}", f"{find} -delete"]
    return TaskParts(spec, files, checks.render(), steps, _touch(layout, ages))


def newest_of_type(rng: random.Random, layout: Layout) -> TaskParts:
    folder, dest = layout.folder("exports", "data exports"), "current"
    names = words(rng, rng.randint(4, 6))
    csvs = [f"{folder}/{n} export.csv" if i == 0 else f"{folder}/{n}.csv" for i, n in enumerate(names)]
    newer_txt = f"{folder}/notes.txt"  # newer than every CSV: the trap for "the newest file"
    ages = dict(zip(csvs, rng.sample(range(2, 40), len(csvs)))) | {newer_txt: 0}
    newest = min(csvs, key=ages.__getitem__)
    files = {p: f"id,value\n1,{ages[p]}\n" for p in csvs} | {newer_txt: "remember the export\n"}
    checks = VerifierTests()
    checks.add("copied", f"assert os.listdir({layout.path(dest)!r}) == [{newest.rsplit('/', 1)[1]!r}]")
    checks.unchanged(layout.path(f"{dest}/{newest.rsplit('/', 1)[1]}"), files[newest])
    for p, content in files.items():
        checks.unchanged(layout.path(p), content)
    spec = Spec(
        goal=f"copy the most recently modified .csv file of {layout.show(folder)} into {layout.show(dest)}",
        notes=[
            f"{layout.show(dest)} does not exist yet.",
            "Only .csv files count; leave the originals in place. Some names contain spaces.",
        ],
    )
    steps = [
        f"mkdir -p {layout.sh(dest)}",
        f'cp "$(ls -t {layout.sh(folder)}/*.csv | head -n 1)" {layout.sh(dest)}/',
    ]
    return TaskParts(spec, files, checks.render(), steps, _touch(layout, ages))


def cold_storage(rng: random.Random, layout: Layout) -> TaskParts:
    folder, dest = layout.folder("data", "data files"), "cold storage"
    names = words(rng, 8)
    # big and old, big and new, small and old, small and new: only the first kind moves
    kinds = [(True, True), (True, False), (False, True), (False, False)]
    kinds += [rng.choice(kinds) for _ in names[4:]]
    files, ages = {}, {}
    for name, (big, old) in zip(names, kinds):
        path = f"{folder}/{name}.bin"
        files[path] = _filler(rng, (rng.randint(60, 90) if big else rng.randint(1, 20)) * 1024)
        ages[path] = rng.randint(OLD, OLD + 40) if old else rng.randint(0, RECENT)
    moved = [f"{n}.bin" for n, k in zip(names, kinds) if k == (True, True)]
    checks = VerifierTests()
    checks.add("moved", f"assert sorted(os.listdir({layout.path(dest)!r})) == {sorted(moved)!r}")
    for path, content in files.items():
        name = path.rsplit("/", 1)[1]
        checks.unchanged(layout.path(f"{dest}/{name}" if name in moved else path), content)
    spec = Spec(
        goal=f"move the files of {layout.show(folder)} that are both bigger than 50 KiB and older than 10 days into "
        f"{layout.show(dest)}",
        notes=[f"{layout.show(dest)} does not exist yet.", "Files that are only big or only old stay."],
    )
    steps = [
        f"mkdir -p {layout.sh(dest)}",
        f"find {layout.sh(folder)} -type f -size +50k -mtime +10 -exec mv {{}} {layout.sh(dest)}/ \\;",
    ]
    return TaskParts(spec, files, checks.render(), steps, _touch(layout, ages))


def size_report(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("backups", "nightly backups")
    files, big = _sized(rng, folder, rng.randint(6, 9), rng.randint(2, 4), ext="tar")
    sizes = {p.rsplit("/", 1)[1]: len(files[p]) for p in big}
    out = "reports/big_backups.txt"
    rows = [f"{n} {s}" for n, s in sorted(sizes.items(), key=lambda item: -item[1])]
    checks = VerifierTests()
    checks.lines(layout.path(out), ["name bytes", *rows])
    spec = Spec(
        goal=f"write a report of the files under {layout.show(folder)} (at any depth) bigger than 30 KiB to "
        f"{layout.show(out)}",
        output="a header line 'name bytes', then one line per file, 'name size' (the file name without folders "
        "and the size in bytes), largest first",
        notes=[f"{layout.show('reports')} does not exist yet."],
    )
    steps = [
        f"mkdir -p {layout.sh('reports')} && echo 'name bytes' > {layout.sh(out)}",
        f"find {layout.sh(folder)} -type f -size +30k -printf '%f %s\\n' | sort -k2,2nr >> {layout.sh(out)}",
    ]
    return TaskParts(spec, files, checks.render(), steps)


FAMILY = Family(
    name="find-size-time",
    skill="find files by size and modification time",
    templates={
        1: (
            Template("bigger-than", "the files bigger than N KiB", bigger_than),
            Template("delete-older", "delete the files older than D days", delete_older),
            Template("move-newest", "move the most recently modified file", move_newest),
            Template("count-newer", "count the files modified after a reference file", count_newer),
        ),
        2: (
            Template("recent-names", "the names of the files modified in the last days", recent_names),
            Template("archive-old", "move the old files into a new folder", archive_old),
            Template("size-window", "the files between two sizes", size_window),
            Template("oldest-first", "the files from oldest to newest", oldest_first),
        ),
        3: (
            Template("purge-old-logs", "report then delete old logs, other old files stay", purge_old_logs),
            Template("newest-of-type", "copy the newest file of one type (a newer other file)", newest_of_type),
            Template("cold-storage", "move the files both big and old into a folder with a space", cold_storage),
            Template("size-report", "a report with a header of the big files, largest first", size_report),
        ),
    },
)
