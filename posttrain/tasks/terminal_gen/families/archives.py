"""Archives: create a tar.gz, extract one into a new folder, unzip then gzip in place."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
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


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests(ARCHIVE_HELPERS)
    if difficulty == 1:
        folder, archive = stem(rng), f"/app/{stem(rng)}.tar.gz"
        tree = _tree(rng, folder)
        checks.add("archive_holds_folder", f"assert members({archive!r}) == {tree!r}")
        checks.add("is_gzip", f"assert Path({archive!r}).read_bytes()[:2] == b'\\x1f\\x8b'")
        return TaskParts(
            instruction=f"Create a gzip-compressed tar archive {archive} of the folder /app/{folder}, "
            f"with member paths starting with {folder}/.",
            files=tree,
            tests=checks.render(),
            steps=[f"tar -czf {archive} -C /app {folder}"],
        )
    if difficulty == 2:
        folder, dest = stem(rng), rng.choice(("restore", "unpacked", "extracted"))
        tree = _tree(rng, folder)
        for path, content in tree.items():
            checks.unchanged(f"/app/{dest}/{path}", content)
        checks.add("archive_kept", f"assert members('/app/backup.tar.gz') == {tree!r}")
        return TaskParts(
            instruction=f"Extract the archive /app/backup.tar.gz into a new folder /app/{dest}, so that its files "
            f"end up under /app/{dest}/{folder}/. Keep the archive.",
            files=tree,
            tests=checks.render(),
            steps=[f"mkdir -p /app/{dest} && tar -xzf /app/backup.tar.gz -C /app/{dest}"],
            setup=[f"cd /app && tar -czf backup.tar.gz {folder} && rm -rf {folder}"],
        )
    # logs inside a zip, one name with a space; a README that must not be gzipped
    names = words(rng, 3)
    logs = {f"{names[0]}.log": "a\n" * rng.randint(1, 5), f"{names[1]} old.log": f"{names[2]} {rng.randint(1, 99)}\n"}
    readme = f"logs of {rng.choice(words(rng, 1))}\n"
    for name, content in logs.items():
        checks.add(
            "gzipped", f"assert gzip.decompress(Path('/app/unzipped/{name}.gz').read_bytes()).decode() == {content!r}"
        )
        checks.add("original_gone", f"assert not Path('/app/unzipped/{name}').exists()")
    checks.unchanged("/app/unzipped/README.txt", readme)
    files = {f"stage/{n}": c for n, c in logs.items()} | {"stage/README.txt": readme}
    return TaskParts(
        instruction="Unzip /app/upload.zip into /app/unzipped (it does not exist yet), then compress each .log file "
        "there with gzip in place, so x.log becomes x.log.gz. Leave other files as they are.",
        files=files,
        tests=checks.render(),
        steps=["mkdir -p /app/unzipped", "unzip -q /app/upload.zip -d /app/unzipped", "gzip /app/unzipped/*.log"],
        setup=["cd /app/stage && zip -q -r /app/upload.zip . && cd /app && rm -rf /app/stage"],
    )


FAMILY = Family(
    name="archives",
    skill="create and extract tar, gzip and zip archives",
    levels=(
        "tar.gz a folder",
        "extract a tar.gz into a new folder",
        "unzip into a new folder, then gzip some files in place (a name with a space)",
    ),
    build=build,
)
