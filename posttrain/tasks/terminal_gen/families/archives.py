"""Archives: create, list, extract and repack tar, gzip and zip archives."""

from __future__ import annotations

import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words

ARCHIVE_HELPERS = """
import gzip
import tarfile


def members(archive):
    with tarfile.open(archive) as tar:
        return {m.name.removeprefix('./'): tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
"""


def _tree(rng: random.Random, root: str) -> dict[str, str]:
    names = words(rng, 4)
    paths = [f"{root}/{names[0]}.txt", f"{root}/{names[1]}.txt", f"{root}/{names[2]}/{names[3]}.txt"]
    return {p: f"{' '.join(words(rng, 4))} {rng.randint(1, 999)}\n" for p in paths}


def tar_folder(rng: random.Random, layout: Layout) -> TaskParts:
    folder, archive = stem(rng), f"{stem(rng)}.tar.gz"
    tree = _tree(rng, folder)
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.add("archive_holds_folder", f"assert members({layout.path(archive)!r}) == {tree!r}")
    checks.add("is_gzip", f"assert Path({layout.path(archive)!r}).read_bytes()[:2] == b'\\x1f\\x8b'")
    return TaskParts(
        instruction=Spec(
            goal=f"create a gzip-compressed tar archive {layout.show(archive)} of the folder {layout.show(folder)}",
            output=f"member paths starting with {folder}/",
        ),
        files=tree,
        tests=checks.render(),
        steps=[f"tar -czf {layout.sh(archive)} -C {layout.sh()} {folder}"],
    )


def extract_into(rng: random.Random, layout: Layout) -> TaskParts:
    folder, dest = stem(rng), layout.folder(rng.choice(("restore", "unpacked", "extracted")), "restored files")
    tree = _tree(rng, folder)
    checks = VerifierTests(ARCHIVE_HELPERS)
    for path, content in tree.items():
        checks.unchanged(layout.path(f"{dest}/{path}"), content)
    checks.add("archive_kept", f"assert members({layout.path('backup.tar.gz')!r}) == {tree!r}")
    return TaskParts(
        instruction=Spec(
            goal=f"extract the archive {layout.show('backup.tar.gz')} into a new folder {layout.show(dest)}",
            output=f"its files under {layout.show(f'{dest}/{folder}')}/",
            notes=["Keep the archive."],
        ),
        files=tree,
        tests=checks.render(),
        steps=[f"mkdir -p {layout.sh(dest)} && tar -xzf {layout.sh('backup.tar.gz')} -C {layout.sh(dest)}"],
        setup=[f"cd {layout.sh()} && tar -czf backup.tar.gz {folder} && rm -rf {folder}"],
    )


def unzip_then_gzip(rng: random.Random, layout: Layout) -> TaskParts:
    # logs inside a zip, one name with a space; a README that must not be gzipped
    names = words(rng, 3)
    logs = {f"{names[0]}.log": "a\n" * rng.randint(1, 5), f"{names[1]} old.log": f"{names[2]} {rng.randint(1, 99)}\n"}
    readme = f"logs of {rng.choice(words(rng, 1))}\n"
    unzipped = layout.folder("unzipped", "unzipped logs")
    checks = VerifierTests(ARCHIVE_HELPERS)
    for name, content in logs.items():
        gz = layout.path(f"{unzipped}/{name}.gz")
        checks.add("gzipped", f"assert gzip.decompress(Path({gz!r}).read_bytes()).decode() == {content!r}")
        checks.add("original_gone", f"assert not Path({layout.path(f'{unzipped}/{name}')!r}).exists()")
    checks.unchanged(layout.path(f"{unzipped}/README.txt"), readme)
    files = {f"stage/{n}": c for n, c in logs.items()} | {"stage/README.txt": readme}
    return TaskParts(
        instruction=Spec(
            goal=f"unzip {layout.show('upload.zip')} into {layout.show(unzipped)}, then compress each .log file "
            "there with gzip in place, so x.log becomes x.log.gz",
            notes=[f"{layout.show(unzipped)} does not exist yet.", "Leave other files as they are."],
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh(unzipped)}",
            f"unzip -q {layout.sh('upload.zip')} -d {layout.sh(unzipped)}",
            f"gzip {layout.sh(unzipped)}/*.log",
        ],
        setup=[f"cd {layout.sh('stage')} && zip -q -r {layout.sh('upload.zip')} . && rm -rf {layout.sh('stage')}"],
    )


def _packed(rng: random.Random, layout: Layout) -> tuple[str, dict[str, str], list[str]]:
    """A folder packed into backup.tar.gz at image build time (the folder itself removed)."""
    folder = stem(rng)
    tree = _tree(rng, folder)
    return folder, tree, [f"cd {layout.sh()} && tar -czf backup.tar.gz {folder} && rm -rf {folder}"]


def list_members(rng: random.Random, layout: Layout) -> TaskParts:
    folder, tree, setup = _packed(rng, layout)
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.lines(layout.path("contents.txt"), sorted(tree))
    return TaskParts(
        instruction=Spec(
            goal=f"write the paths of the files stored in {layout.show('backup.tar.gz')} to "
            f"{layout.show('contents.txt')}",
            output="the paths as the archive stores them, files only (no directories), sorted, one per line",
            notes=["Do not extract the archive."],
        ),
        files=tree,
        tests=checks.render(),
        steps=[f"tar -tzf {layout.sh('backup.tar.gz')} | grep -v '/$' | sort > {layout.sh('contents.txt')}"],
        setup=setup,
    )


def gzip_keep(rng: random.Random, layout: Layout) -> TaskParts:
    name = f"{layout.folder('exports', 'daily exports')}/{stem(rng)}.csv"
    content = "".join(f"{w},{rng.randint(1, 999)}\n" for w in words(rng, 6))
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.add(
        "gzipped", f"assert gzip.decompress(Path({layout.path(name + '.gz')!r}).read_bytes()).decode() == {content!r}"
    )
    checks.unchanged(layout.path(name), content)
    return TaskParts(
        instruction=Spec(
            goal=f"compress {layout.show(name)} with gzip into {layout.show(name + '.gz')}",
            notes=["Keep the original file as well."],
        ),
        files={name: content},
        tests=checks.render(),
        steps=[f"gzip -k {layout.sh(name)}"],
    )


def gunzip_file(rng: random.Random, layout: Layout) -> TaskParts:
    name = f"{layout.folder('downloads', 'new downloads')}/{stem(rng)}.txt"
    content = "".join(" ".join(words(rng, 4)) + "\n" for _ in range(3))
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.unchanged(layout.path(name), content)
    checks.add("gz_gone", f"assert not Path({layout.path(name + '.gz')!r}).exists()")
    return TaskParts(
        instruction=Spec(
            goal=f"decompress {layout.show(name + '.gz')} in place, so that {layout.show(name)} takes its place",
        ),
        files={name: content},
        tests=checks.render(),
        steps=[f"gunzip {layout.sh(name + '.gz')}"],
        setup=[f"gzip {layout.sh(name)}"],
    )


def extract_one(rng: random.Random, layout: Layout) -> TaskParts:
    folder, tree, setup = _packed(rng, layout)
    wanted = rng.choice(sorted(tree))
    out = "recovered.txt"  # named unlike the member: copying a member by its name is the probes' trick
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.unchanged(layout.path(out), tree[wanted])
    for path in tree:
        checks.add("nothing_else_extracted", f"assert not Path({layout.path(path)!r}).exists()")
    checks.add("archive_kept", f"assert members({layout.path('backup.tar.gz')!r}) == {tree!r}")
    spec = Spec(
        f"write the content of {wanted}, a file inside {layout.show('backup.tar.gz')}, to {layout.show(out)}",
        notes=["Extract nothing else onto the disk.", "Keep the archive."],
    )
    steps = [f"tar -xzOf {layout.sh('backup.tar.gz')} {wanted} > {layout.sh(out)}"]
    return TaskParts(spec, tree, checks.render(), steps, setup)


def zip_folder(rng: random.Random, layout: Layout) -> TaskParts:
    folder = stem(rng)
    tree = _tree(rng, folder)
    out = f"{stem(rng)}.zip"
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.add(
        "zipped",
        f"import zipfile\nwith zipfile.ZipFile({layout.path(out)!r}) as z:\n"
        f"    assert {{n: z.read(n).decode() for n in z.namelist() if not n.endswith('/')}} == {tree!r}",
    )
    return TaskParts(
        instruction=Spec(
            goal=f"create a zip archive {layout.show(out)} of the folder {layout.show(folder)}",
            output=f"member paths starting with {folder}/",
        ),
        files=tree,
        tests=checks.render(),
        steps=[f"cd {layout.sh()} && zip -q -r {out} {folder}"],
    )


def tar_selected(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("reports", "monthly reports")
    names = words(rng, 6)
    csvs = {f"{n}.csv": f"{n},{rng.randint(1, 99)}\n" for n in names[:4]}
    others = {f"{n}.txt": f"{n}\n" for n in names[4:]}
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.add("only_csvs", f"assert members({layout.path('csv_reports.tar.gz')!r}) == {csvs!r}")
    return TaskParts(
        instruction=Spec(
            goal=f"pack only the .csv files of {layout.show(folder)} into a gzip-compressed tar archive "
            f"{layout.show('csv_reports.tar.gz')}",
            output="members named by their file name alone, with no directory part",
        ),
        files={f"{folder}/{n}": c for n, c in {**csvs, **others}.items()},
        tests=checks.render(),
        steps=[f"cd {layout.sh(folder)} && tar -czf {layout.sh('csv_reports.tar.gz')} *.csv"],
    )


def zip_to_tar(rng: random.Random, layout: Layout) -> TaskParts:
    names = words(rng, 4)
    files = {f"{names[0]}.txt": "a\n", f"{names[1]} notes.md": f"{names[2]}\n", f"{names[3]}/data.csv": "x,1\n"}
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.add("repacked", f"assert members({layout.path('converted/bundle.tar.gz')!r}) == {files!r}")
    checks.add("zip_kept", f"assert Path({layout.path('bundle.zip')!r}).is_file()")
    return TaskParts(
        instruction=Spec(
            goal=f"repack {layout.show('bundle.zip')} as a gzip-compressed tar archive "
            f"{layout.show('converted/bundle.tar.gz')} holding the same files",
            output="member paths as in the zip (relative, for example notes/a.txt)",
            notes=[f"{layout.show('converted')} does not exist yet.", "Keep the zip.", "One name has a space."],
        ),
        files={f"stage/{p}": c for p, c in files.items()},
        tests=checks.render(),
        steps=[
            "mkdir -p /tmp/repack",
            f"unzip -q {layout.sh('bundle.zip')} -d /tmp/repack",
            f"mkdir -p {layout.sh('converted')} && tar -czf {layout.sh('converted/bundle.tar.gz')} -C /tmp/repack .",
        ],
        setup=[f"cd {layout.sh('stage')} && zip -q -r {layout.sh('bundle.zip')} . && rm -rf {layout.sh('stage')}"],
    )


def bundle_excluding(rng: random.Random, layout: Layout) -> TaskParts:
    folder = stem(rng)
    names = words(rng, 5)
    kept = {f"{folder}/{names[0]}.py": "x = 1\n", f"{folder}/{names[1]} docs/readme.md": "# hi\n"}
    dropped = {
        f"{folder}/{names[2]}.tmp": "t\n",
        f"{folder}/cache/{names[3]}.bin": "c\n",
        f"{folder}/{names[4]}.tmp": "u\n",
    }
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.add("bundled", f"assert members({layout.path('dist/bundle.tar.gz')!r}) == {kept!r}")
    for path, content in {**kept, **dropped}.items():
        checks.unchanged(layout.path(path), content)
    return TaskParts(
        instruction=Spec(
            goal=f"pack the folder {layout.show(folder)} into a gzip-compressed tar archive "
            f"{layout.show('dist/bundle.tar.gz')}, leaving out every .tmp file and its cache subfolder",
            output=f"member paths starting with {folder}/",
            notes=[f"{layout.show('dist')} does not exist yet.", f"Leave {layout.show(folder)} as it is."],
        ),
        files={**kept, **dropped},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('dist')}",
            f"tar -czf {layout.sh('dist/bundle.tar.gz')} --exclude='*.tmp' --exclude='{folder}/cache' "
            f"-C {layout.sh()} {folder}",
        ],
    )


def archive_and_remove(rng: random.Random, layout: Layout) -> TaskParts:
    logs = layout.folder("logs", "old logs")
    names = words(rng, 3)
    tree = {f"{n}.log": f"{n} {rng.randint(1, 99)}\n" for n in names[:2]} | {f"{names[2]}/x.log": "x\n"}
    out = f"archive/{logs.replace(' ', '_')}.tar.gz"
    checks = VerifierTests(ARCHIVE_HELPERS)
    checks.add(
        "archived", f"assert members({layout.path(out)!r}) == {{f'{logs}/' + k: v for k, v in {tree!r}.items()}}"
    )
    checks.add("removed", f"assert not Path({layout.path(logs)!r}).exists()")
    return TaskParts(
        instruction=Spec(
            goal=f"archive the folder {layout.show(logs)} as {layout.show(out)} (gzip-compressed tar), then delete "
            "the folder",
            output=f"member paths starting with {logs}/",
            notes=[f"{layout.show('archive')} does not exist yet."],
        ),
        files={f"{logs}/{p}": c for p, c in tree.items()},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('archive')}",
            f"tar -czf {layout.sh(out)} -C {layout.sh()} {shlex.quote(logs)}",
            f"rm -rf {layout.sh(logs)}",
        ],
    )


FAMILY = Family(
    name="archives",
    skill="create and extract tar, gzip and zip archives",
    templates={
        1: (
            Template("tar-folder", "tar.gz a folder", tar_folder),
            Template("list-members", "list the files of a tar.gz", list_members),
            Template("gzip-keep", "gzip a file keeping the original", gzip_keep),
            Template("gunzip-file", "decompress a .gz in place", gunzip_file),
        ),
        2: (
            Template("extract-into", "extract a tar.gz into a new folder", extract_into),
            Template("extract-one", "one member of a tar.gz to a file (tar -O)", extract_one),
            Template("zip-folder", "zip a folder", zip_folder),
            Template("tar-selected", "tar only the files of one extension", tar_selected),
        ),
        3: (
            Template(
                "unzip-then-gzip",
                "unzip into a new folder, then gzip some files in place (a name with a space)",
                unzip_then_gzip,
            ),
            Template("zip-to-tar", "repack a zip as a tar.gz in a new folder (a name with a space)", zip_to_tar),
            Template("bundle-excluding", "tar.gz a folder leaving out patterns", bundle_excluding),
            Template("archive-and-remove", "archive a folder into a new folder, then delete it", archive_and_remove),
        ),
    },
)
