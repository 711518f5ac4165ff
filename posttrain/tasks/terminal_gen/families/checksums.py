"""Checksums and duplicates with sha256sum: hash a file or text, write and verify a sums file,
find files by hash, and find or drop duplicate files by content."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests, sha256
from posttrain.tasks.terminal_gen.vocabulary import stem, words

SUMS_FORMAT = "sha256sum's own format ('<hash>  <name>', two spaces between)"


def _text(rng: random.Random) -> str:
    return "".join(f"{w} {rng.randint(1, 9999)}\n" for w in words(rng, rng.randint(2, 4)))


def _folder(rng: random.Random, layout: Layout, plain: str, spaced: str, names: list[str]) -> dict[str, str]:
    folder = layout.folder(plain, spaced)
    return {f"{folder}/{n}": _text(rng) for n in names}


def _with_copies(rng: random.Random, names: list[str]) -> dict[str, str]:
    """name -> content, where at least two contents occur twice or more and one occurs once."""
    contents = [_text(rng) for _ in range(len(names) - 2)]
    chosen = contents + [contents[0], contents[1]]
    rng.shuffle(chosen)
    return dict(zip(names, chosen))


def _unchanged_all(checks: VerifierTests, layout: Layout, files: dict[str, str]) -> VerifierTests:
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
    return checks


def _task(spec: Spec, files: dict[str, str], checks: VerifierTests, *steps: str) -> TaskParts:
    return TaskParts(instruction=spec, files=files, tests=checks.render(), steps=list(steps))


# ---- difficulty 1: one command -------------------------------------------------------------


def hash_file(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('release', 'release files')}/{stem(rng)}.tar"
    files = {rel: _text(rng) * 3}
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.value(layout.path("sha256.txt"), sha256(files[rel]))
    spec = Spec(
        goal=f"write the SHA-256 checksum of {layout.show(rel)} to {layout.show('sha256.txt')}",
        output="just the 64 hex digits, without the file name",
    )
    return _task(spec, files, checks, f"sha256sum {layout.sh(rel)} | cut -d' ' -f1 > {layout.sh('sha256.txt')}")


def sums_of_folder(rng: random.Random, layout: Layout) -> TaskParts:
    names = sorted(f"{w}.dat" for w in words(rng, rng.randint(3, 6)))
    files = _folder(rng, layout, "payload", "upload payload", names)
    folder = next(iter(files)).rsplit("/", 1)[0]
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.lines(layout.path("SHA256SUMS"), [f"{sha256(files[f'{folder}/{n}'])}  {n}" for n in names])
    spec = Spec(
        goal=f"write the SHA-256 sums of every file in {layout.show(folder)} to {layout.show('SHA256SUMS')}",
        output=f"one line per file in {SUMS_FORMAT}, the bare file name, sorted by name",
    )
    return _task(spec, files, checks, f"cd {layout.sh(folder)} && sha256sum * > {layout.sh('SHA256SUMS')}")


def count_distinct(rng: random.Random, layout: Layout) -> TaskParts:
    names = [f"{w}.jpg" for w in words(rng, rng.randint(5, 8))]
    folder = layout.folder("photos", "holiday photos")
    files = {f"{folder}/{n}": c for n, c in _with_copies(rng, names).items()}
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.value(layout.path("distinct.txt"), str(len(set(files.values()))))
    spec = Spec(
        goal=f"count how many different contents the files of {layout.show(folder)} hold and write the count to "
        f"{layout.show('distinct.txt')}",
        inputs=["Some files are byte-for-byte copies of others"],
        output="just the integer",
        notes=["Files with equal content count once."],
    )
    return _task(
        spec,
        files,
        checks,
        f"cd {layout.sh(folder)} && sha256sum * | cut -c1-64 | sort -u | wc -l > {layout.sh('distinct.txt')}",
    )


def hash_text(rng: random.Random, layout: Layout) -> TaskParts:
    token = f"{rng.choice(words(rng, 3))}-{rng.randint(1000, 9999)}"
    checks = VerifierTests()
    checks.value(layout.path("token.sha256"), sha256(token))
    spec = Spec(
        goal=f"write the SHA-256 hash of the text '{token}' to {layout.show('token.sha256')}",
        output="just the 64 hex digits",
        notes=["Hash exactly those characters, with no newline after them."],
    )
    return _task(spec, {}, checks, f"printf %s '{token}' | sha256sum | cut -d' ' -f1 > {layout.sh('token.sha256')}")


# ---- difficulty 2: up to two steps -----------------------------------------------------------


def _tampered(rng: random.Random, names: list[str]) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """(the files as they were hashed, as they are now, the names that changed)."""
    before = {n: _text(rng) for n in names}
    changed = sorted(rng.sample(names, rng.randint(1, len(names) - 2)))
    return before, {n: (before[n] + "edited\n" if n in changed else before[n]) for n in names}, changed


def verify_failures(rng: random.Random, layout: Layout) -> TaskParts:
    names = [f"{w}.bin" for w in words(rng, rng.randint(4, 7))]
    before, now, changed = _tampered(rng, names)
    folder = layout.folder("firmware", "firmware images")
    files = {f"{folder}/{n}": now[n] for n in names}
    files["firmware.sha256"] = "".join(f"{sha256(before[n])}  {n}\n" for n in names)
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.lines(layout.path("failed.txt"), [n for n in names if n in changed])
    spec = Spec(
        goal=f"check the files of {layout.show(folder)} against {layout.show('firmware.sha256')} and write the "
        f"names of those that fail to {layout.show('failed.txt')}",
        inputs=[f"{layout.show('firmware.sha256')} is in {SUMS_FORMAT}, names relative to {layout.show(folder)}"],
        output="one bare file name per line, in the order of the sums file",
    )
    return _task(
        spec,
        files,
        checks,
        f"cd {layout.sh(folder)} && sha256sum -c {layout.sh('firmware.sha256')} 2>/dev/null | grep ': FAILED$' "
        f"| sed 's/: FAILED$//' > {layout.sh('failed.txt')}",
    )


def find_duplicates(rng: random.Random, layout: Layout) -> TaskParts:
    names = [f"{w}.txt" for w in words(rng, rng.randint(5, 8))]
    folder = layout.folder("inbox", "shared inbox")
    content = _with_copies(rng, names)
    files = {f"{folder}/{n}": c for n, c in content.items()}
    values = list(content.values())
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.lines(layout.path("duplicates.txt"), sorted(n for n, c in content.items() if values.count(c) > 1))
    spec = Spec(
        goal=f"write the names of the files in {layout.show(folder)} whose content also appears in another file "
        f"there to {layout.show('duplicates.txt')}",
        output="every such name, all copies and not only the extra ones, one per line, sorted alphabetically",
    )
    return _task(
        spec,
        files,
        checks,
        f"cd {layout.sh(folder)} && sha256sum * | sort | uniq -w64 -D | cut -c67- | sort > "
        f"{layout.sh('duplicates.txt')}",
    )


def match_hash(rng: random.Random, layout: Layout) -> TaskParts:
    names = [f"{w}.iso" for w in words(rng, rng.randint(4, 7))]
    files = _folder(rng, layout, "images", "disk images", names)
    target = rng.choice(list(files))
    folder, name = target.rsplit("/", 1)
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.value(layout.path("match.txt"), name)
    spec = Spec(
        goal=f"find the file in {layout.show(folder)} whose SHA-256 hash is {sha256(files[target])} and write its "
        f"name to {layout.show('match.txt')}",
        output="just the bare file name",
    )
    return _task(
        spec,
        files,
        checks,
        f"cd {layout.sh(folder)} && sha256sum * | grep '^{sha256(files[target])}' | cut -c67- > "
        f"{layout.sh('match.txt')}",
    )


def sums_of_tree(rng: random.Random, layout: Layout) -> TaskParts:
    parts = words(rng, 6)
    folder = layout.folder("site", "web site")
    names = sorted([f"{parts[0]}.html", f"{parts[1]}/{parts[2]}.css", f"{parts[1]}/{parts[3]}.js", f"{parts[4]}.txt"])
    files = {f"{folder}/{n}": _text(rng) for n in names}
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.lines(layout.path("tree.sha256"), [f"{sha256(files[f'{folder}/{n}'])}  {n}" for n in names])
    spec = Spec(
        goal=f"write the SHA-256 sums of every file under {layout.show(folder)}, subfolders included, to "
        f"{layout.show('tree.sha256')}",
        output=f"one line per file in {SUMS_FORMAT}, each path relative to {layout.show(folder)} without a "
        "leading ./, sorted by path",
    )
    return _task(
        spec,
        files,
        checks,
        f"cd {layout.sh(folder)} && find . -type f | sed 's|^\\./||' | sort | xargs -d '\\n' sha256sum > "
        f"{layout.sh('tree.sha256')}",
    )


# ---- difficulty 3: names with spaces, files to leave alone, a folder that does not exist yet ----


def _spaced_copies(rng: random.Random, n: int, ext: str) -> dict[str, str]:
    chosen = words(rng, n + 1)
    names = [f"{w} {chosen[-1]}.{ext}" if i % 2 == 0 else f"{w}.{ext}" for i, w in enumerate(chosen[:n])]
    return _with_copies(rng, names)


def _kept_copies(content: dict[str, str]) -> tuple[list[str], list[str]]:
    """(the alphabetically first name of each content, the other names), both sorted."""
    first: dict[str, str] = {}
    for name in sorted(content):
        first.setdefault(content[name], name)
    keep = sorted(first.values())
    return keep, sorted(n for n in content if n not in keep)


def dedupe_folder(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("downloads", "my downloads")
    content = _spaced_copies(rng, rng.randint(5, 7), "pdf")
    keep, extra = _kept_copies(content)
    files = {f"{folder}/{n}": c for n, c in content.items()}
    elsewhere = f"{layout.folder('backup', 'old backup')}/{extra[0]}"
    files[elsewhere] = content[extra[0]]  # a copy outside the folder: not one to delete
    checks = VerifierTests()
    checks.add("one_copy_each", f"assert sorted(os.listdir({layout.path(folder)!r})) == {keep!r}")
    _unchanged_all(checks, layout, {p: c for p, c in files.items() if p.rsplit("/", 1)[1] in keep or p == elsewhere})
    checks.lines(layout.path("removed.txt"), extra)
    listing = layout.sh("removed.txt")
    return _task(
        Spec(
            goal=f"keep one copy of each distinct file in {layout.show(folder)}, the one whose name sorts first, "
            f"delete the other copies, and write the deleted names to {layout.show('removed.txt')}",
            output="one bare name per line, sorted alphabetically",
            notes=["Some names contain spaces.", f"Do not touch anything outside {layout.show(folder)}."],
        ),
        files,
        checks,
        f"cd {layout.sh(folder)} && sha256sum * | sort | awk 'seen[$1]++ {{print substr($0, 67)}}' | sort > {listing}",
        f"cd {layout.sh(folder)} && xargs -d '\\n' rm -- < {listing}",
    )


def verify_into_report(rng: random.Random, layout: Layout) -> TaskParts:
    chosen = words(rng, 7)
    names = [f"{chosen[0]} {chosen[1]}.csv", *(f"{w}.csv" for w in chosen[2 : 2 + rng.randint(3, 5)])]
    before, now, changed = _tampered(rng, names)
    missing = rng.choice([n for n in names if n not in changed])
    folder = layout.folder("ledger", "ledger files")
    files = {f"{folder}/{n}": now[n] for n in names if n != missing}
    files["ledger.sha256"] = "".join(f"{sha256(before[n])}  {n}\n" for n in names)
    report = f"reports/{rng.randint(2020, 2025)}-{rng.randint(1, 12):02d}/failed.txt"
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.lines(layout.path(report), [n for n in names if n in changed or n == missing])
    spec = Spec(
        goal=f"verify the files of {layout.show(folder)} against {layout.show('ledger.sha256')} and write the "
        f"names of every file that fails, changed or missing, to {layout.show(report)}",
        inputs=[f"{layout.show('ledger.sha256')} is in {SUMS_FORMAT}, names relative to {layout.show(folder)}"],
        output="one name per line, in the order of the sums file",
        notes=["Some names contain spaces.", f"The folder of {layout.show(report)} does not exist yet."],
    )
    return _task(
        spec,
        files,
        checks,
        f"mkdir -p {layout.sh(report.rsplit('/', 1)[0])}",
        f"cd {layout.sh(folder)} && sha256sum -c {layout.sh('ledger.sha256')} 2>/dev/null | grep -E ': FAILED' "
        f"| sed -E 's/: FAILED( open or read)?$//' > {layout.sh(report)}",
    )


def changed_since(rng: random.Random, layout: Layout) -> TaskParts:
    chosen = words(rng, 8)
    names = [f"{chosen[0]} notes.md", *(f"{w}.md" for w in chosen[1 : 1 + rng.randint(3, 5)])]
    before, now, changed = _tampered(rng, names)
    added = sorted(f"{w}.md" for w in chosen[-2:])
    folder = layout.folder("wiki", "team wiki")
    files = {f"{folder}/{n}": now[n] for n in names} | {f"{folder}/{n}": _text(rng) for n in added}
    files["wiki.sha256"] = "# taken before the migration\n" + "".join(f"{sha256(before[n])}  {n}\n" for n in names)
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.lines(layout.path("changed.txt"), sorted(changed))
    checks.lines(layout.path("added.txt"), added)
    old = layout.sh("wiki.sha256")
    return _task(
        Spec(
            goal=f"compare {layout.show(folder)} with the old manifest {layout.show('wiki.sha256')}: write the "
            f"names of the files whose content changed to {layout.show('changed.txt')}, and the names of the "
            f"files the manifest does not list to {layout.show('added.txt')}",
            inputs=[
                f"{layout.show('wiki.sha256')} starts with a comment line, then lines in {SUMS_FORMAT}, names "
                f"relative to {layout.show(folder)}"
            ],
            output="one bare name per line in each file, sorted alphabetically",
            notes=["Some names contain spaces."],
        ),
        files,
        checks,
        f"cd {layout.sh(folder)} && tail -n +2 {old} | sha256sum -c 2>/dev/null | grep ': FAILED$' "
        f"| sed 's/: FAILED$//' | sort > {layout.sh('changed.txt')}",
        f"cd {layout.sh(folder)} && ls | grep -vxFf <(tail -n +2 {old} | cut -c67-) | sort > {layout.sh('added.txt')}",
    )


def copy_unique(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("scans", "scanned pages")
    dest = rng.choice(("unique", "distinct", "deduped"))
    content = _spaced_copies(rng, rng.randint(5, 7), "png")
    keep, _ = _kept_copies(content)
    files = {f"{folder}/{n}": c for n, c in content.items()}
    checks = _unchanged_all(VerifierTests(), layout, files)
    checks.add("copied", f"assert sorted(os.listdir({layout.path(dest)!r})) == {keep!r}")
    for name in keep:
        checks.unchanged(layout.path(f"{dest}/{name}"), content[name])
    return _task(
        Spec(
            goal=f"copy one file of each distinct content in {layout.show(folder)} into a new folder "
            f"{layout.show(dest)}: of files with equal content, the one whose name sorts first",
            notes=["Some names contain spaces.", f"Leave {layout.show(folder)} as it is."],
        ),
        files,
        checks,
        f"mkdir -p {layout.sh(dest)}",
        f"cd {layout.sh(folder)} && sha256sum * | sort | awk '!seen[$1]++ {{print substr($0, 67)}}' "
        f"| xargs -d '\\n' cp -t {layout.sh(dest)}",
    )


FAMILY = Family(
    name="checksums",
    skill="write and verify SHA-256 sums with sha256sum, find and drop duplicate files by content",
    templates={
        1: (
            Template("hash-file", "the SHA-256 of one file", hash_file),
            Template("sums-of-folder", "a sums file for a folder", sums_of_folder),
            Template("count-distinct", "count the distinct contents of a folder", count_distinct),
            Template("hash-text", "the SHA-256 of a string without its newline", hash_text),
        ),
        2: (
            Template("verify-failures", "verify a sums file and list the failures", verify_failures),
            Template("find-duplicates", "every file whose content another file shares", find_duplicates),
            Template("match-hash", "the file with a given hash", match_hash),
            Template("sums-of-tree", "sums of a tree with relative paths, sorted", sums_of_tree),
        ),
        3: (
            Template("dedupe-folder", "keep one copy of each content, list the deleted ones", dedupe_folder),
            Template("verify-into-report", "failures, missing ones too, into a new folder", verify_into_report),
            Template("changed-since", "changed and added files against a manifest with a header", changed_since),
            Template("copy-unique", "copy one file per distinct content into a new folder", copy_unique),
        ),
    },
)
