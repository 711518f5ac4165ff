"""Archives: create a tar.gz, extract one into a new folder, unzip then gzip in place."""

from __future__ import annotations

import random

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


FAMILY = Family(
    name="archives",
    skill="create and extract tar, gzip and zip archives",
    templates={
        1: (Template("tar-folder", "tar.gz a folder", tar_folder),),
        2: (Template("extract-into", "extract a tar.gz into a new folder", extract_into),),
        3: (
            Template(
                "unzip-then-gzip",
                "unzip into a new folder, then gzip some files in place (a name with a space)",
                unzip_then_gzip,
            ),
        ),
    },
)
