"""Diff and patch: make a unified diff, apply and revert a patch, compare two folders."""

from __future__ import annotations

import difflib
import posixpath
import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import WORDS, people, stem, words

# the tests apply a patch the agent wrote to a scratch copy of the old version
APPLIES = """
import shutil
import tempfile


def patched(old, patch, strip=None):
    \"\"\"The text `old` (a file or a folder) becomes once `patch` is applied to a copy of it.\"\"\"
    scratch = Path(tempfile.mkdtemp()) / "copy"
    if Path(old).is_dir():
        shutil.copytree(old, scratch)
        result = run("patch", "-s", f"-p{strip}", "-i", str(patch), cwd=str(scratch))
    else:
        shutil.copy(old, scratch)
        result = run("patch", "-s", str(scratch), "-i", str(patch))
    assert result.returncode == 0, result.stdout + result.stderr
    return scratch
"""


def _lines(rng: random.Random, n: int) -> list[str]:
    return [f"{w} = {rng.randint(1, 999)}" for w in rng.sample(WORDS, n)]


def _versions(rng: random.Random) -> tuple[str, str]:
    """An old text and a new one that changes, drops and adds a line or two."""
    old = _lines(rng, rng.randint(8, 14))
    new = list(old)
    i = rng.randrange(1, len(new) - 1)
    new[i] = new[i].split(" = ")[0] + f" = {rng.randint(1000, 2000)}"
    del new[rng.choice([j for j in range(len(new)) if j != i])]
    new.insert(rng.randrange(len(new) + 1), f"added_{rng.randint(10, 99)} = {rng.randint(1, 999)}")
    return "".join(x + "\n" for x in old), "".join(x + "\n" for x in new)


def _unified(old: str, new: str, old_name: str, new_name: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), old_name, new_name))


def _into_new_folder(layout: Layout, out: str, command: str) -> list[str]:
    """The steps that make the folder of `out` (it does not exist yet), then run `command`."""
    return [f"mkdir -p {layout.sh(posixpath.dirname(out))}", command]


# ---- difficulty 1: one command ----------------------------------------------------------------


def make_patch(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("versions", "file versions")
    name = stem(rng)
    old_rel, new_rel = f"{folder}/{name}.v1.conf", f"{folder}/{name}.v2.conf"
    old, new = _versions(rng)
    out = f"{name}.patch"
    checks = VerifierTests(APPLIES)
    checks.unchanged(layout.path(old_rel), old)
    checks.unchanged(layout.path(new_rel), new)
    checks.add("unified", f"assert any(line.startswith('@@') for line in lines({layout.path(out)!r}))")
    checks.add(
        "patch_turns_old_into_new",
        f"assert patched({layout.path(old_rel)!r}, {layout.path(out)!r}).read_text() == {new!r}",
    )
    spec = Spec(
        goal=f"write a unified diff from {layout.show(old_rel)} to {layout.show(new_rel)} into {layout.show(out)}",
        output="a patch that turns the old version into the new one",
    )
    return TaskParts(
        spec,
        {old_rel: old, new_rel: new},
        checks.render(),
        [f"diff -u {layout.sh(old_rel)} {layout.sh(new_rel)} > {layout.sh(out)} || true"],
    )


def _given_patch(rng: random.Random, layout: Layout) -> tuple[str, str, str, str, str]:
    """(the file, the patch file, old text, new text, the patch) for a file a patch changes."""
    name = f"{stem(rng)}.conf"
    rel = f"{layout.folder('config', 'app config')}/{name}"
    patch_rel = f"{layout.folder('fixes', 'pending fixes')}/{name}.patch"
    old, new = _versions(rng)
    return rel, patch_rel, old, new, _unified(old, new, f"{name}.orig", name)


def apply_patch(rng: random.Random, layout: Layout) -> TaskParts:
    rel, patch_rel, old, new, patch = _given_patch(rng, layout)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), new)
    checks.unchanged(layout.path(patch_rel), patch)
    spec = Spec(goal=f"apply the patch {layout.show(patch_rel)} to {layout.show(rel)}")
    return TaskParts(
        spec, {rel: old, patch_rel: patch}, checks.render(), [f"patch {layout.sh(rel)} < {layout.sh(patch_rel)}"]
    )


def revert_patch(rng: random.Random, layout: Layout) -> TaskParts:
    rel, patch_rel, old, new, patch = _given_patch(rng, layout)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), old)
    checks.unchanged(layout.path(patch_rel), patch)
    spec = Spec(
        goal=f"undo the change that {layout.show(patch_rel)} made to {layout.show(rel)}",
        inputs=[f"The patch has already been applied to {layout.show(rel)}"],
        output=f"{layout.show(rel)} as it was before the patch",
    )
    return TaskParts(
        spec, {rel: new, patch_rel: patch}, checks.render(), [f"patch -R {layout.sh(rel)} < {layout.sh(patch_rel)}"]
    )


def _twin_folders(rng: random.Random, layout: Layout, changed: int) -> tuple[str, str, dict[str, str], list[str]]:
    """Two folders with the same file names; `changed` of the files differ. Returns (a, b,
    files, the names that differ, sorted)."""
    a, b = layout.folder("release", "release build"), layout.folder("staging", "staging build")
    names = [f"{w}.txt" for w in words(rng, rng.randint(4, 7))]
    differ = sorted(rng.sample(names, changed))
    files = {}
    for n in names:
        text = "".join(f"{w}\n" for w in words(rng, 4))
        files[f"{a}/{n}"] = text
        files[f"{b}/{n}"] = text + "extra line\n" if n in differ else text
    return a, b, files, differ


def which_differs(rng: random.Random, layout: Layout) -> TaskParts:
    a, b, files, differ = _twin_folders(rng, layout, 1)
    checks = VerifierTests()
    checks.value(layout.path("differs.txt"), differ[0])
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
    spec = Spec(
        goal=f"find the one file whose content differs between {layout.show(a)} and {layout.show(b)} and write "
        f"its name to {layout.show('differs.txt')}",
        inputs=["Both folders hold files with the same names"],
        output="just the file name, without a folder",
    )
    name_of = "sed -E 's|^Files .*/([^/]+) and .*|\\1|'"
    step = f"diff -rq {layout.sh(a)} {layout.sh(b)} | {name_of} > {layout.sh('differs.txt')}"
    return TaskParts(spec, files, checks.render(), [step])


# ---- difficulty 2: trees, -p1, folders compared, a backup -------------------------------------


def tree_patch(rng: random.Random, layout: Layout) -> TaskParts:
    old_dir, new_dir = "site-old", "site-new"
    names = [f"{w}.conf" for w in words(rng, 3)]
    files = {}
    for n in names:
        old, new = _versions(rng)
        files[f"{old_dir}/{n}"], files[f"{new_dir}/{n}"] = old, new
    extra = f"{rng.choice(WORDS)}_extra.conf"
    files[f"{new_dir}/{extra}"] = "enabled = yes\n"  # only in the new tree
    out = "site.patch"
    checks = VerifierTests(APPLIES)
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
    expected = {p.removeprefix(f"{new_dir}/"): c for p, c in files.items() if p.startswith(new_dir)}
    checks.add(
        "patch_turns_old_tree_into_new",
        f"tree = patched({layout.path(old_dir)!r}, {layout.path(out)!r}, strip=1)\n"
        f"assert {{p.name: p.read_text() for p in tree.iterdir()}} == {expected!r}",
    )
    spec = Spec(
        goal=f"write one unified diff of every difference between {layout.show(old_dir)} and {layout.show(new_dir)} "
        f"into {layout.show(out)}",
        output="a patch that, applied with -p1 inside a copy of the old folder, turns it into the new one, "
        "new files included",
    )
    step = f"cd {layout.sh()} && diff -ruN {old_dir} {new_dir} > {layout.sh(out)} || true"
    return TaskParts(spec, files, checks.render(), [step])


def patch_strip(rng: random.Random, layout: Layout) -> TaskParts:
    project = layout.folder("project", "my project")
    names = [f"{w}.conf" for w in words(rng, 2)]
    files, patch, expected = {}, "", {}
    for n in names:
        old, new = _versions(rng)
        files[f"{project}/src/{n}"], expected[f"{project}/src/{n}"] = old, new
        patch += _unified(old, new, f"a/src/{n}", f"b/src/{n}")
    patch_rel = "update.patch"
    checks = VerifierTests()
    checks.unchanged(layout.path(patch_rel), patch)
    for path, content in expected.items():
        checks.unchanged(layout.path(path), content)
    spec = Spec(
        goal=f"apply {layout.show(patch_rel)} to the files of {layout.show(project)}",
        inputs=[f"The patch names files as a/src/... and b/src/..., relative to {layout.show(project)}"],
    )
    return TaskParts(
        spec,
        {**files, patch_rel: patch},
        checks.render(),
        [f"cd {layout.sh(project)} && patch -p1 < {layout.sh(patch_rel)}"],
    )


def only_in_one(rng: random.Random, layout: Layout) -> TaskParts:
    a, b = layout.folder("photos", "photo library"), "backup"
    names = [f"{w}.jpg" for w in words(rng, rng.randint(6, 9))]
    missing = sorted(rng.sample(names, rng.randint(1, 3)))
    files = {f"{a}/{n}": f"{n}\n" for n in names}
    files.update({f"{b}/{n}": f"{n}\n" for n in names if n not in missing})
    out = "missing_from_backup.txt"
    checks = VerifierTests()
    checks.lines(layout.path(out), missing)
    spec = Spec(
        goal=f"write the names of the files that are in {layout.show(a)} but not in {layout.show(b)} to "
        f"{layout.show(out)}",
        output="one file name per line, sorted alphabetically",
    )
    step = f"diff -q {layout.sh(a)} {layout.sh(b)} | sed -n 's|^Only in [^:]*: ||p' | sort > {layout.sh(out)}"
    return TaskParts(spec, files, checks.render(), [step])


def patch_keep_original(rng: random.Random, layout: Layout) -> TaskParts:
    rel, patch_rel, old, new, patch = _given_patch(rng, layout)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), new)
    checks.unchanged(layout.path(rel + ".orig"), old)
    checks.unchanged(layout.path(patch_rel), patch)
    spec = Spec(
        goal=f"apply {layout.show(patch_rel)} to {layout.show(rel)}, keeping the unpatched file as "
        f"{layout.show(rel + '.orig')}",
    )
    return TaskParts(
        spec, {rel: old, patch_rel: patch}, checks.render(), [f"patch -b {layout.sh(rel)} < {layout.sh(patch_rel)}"]
    )


# ---- difficulty 3: a folder that does not exist yet, files to leave alone, a header, the
# right target among several -------------------------------------------------------------------------


def patch_into_folder(rng: random.Random, layout: Layout) -> TaskParts:
    name = stem(rng)
    old_rel, new_rel = f"{name}.conf", f"{layout.folder('edited', 'edited copy')}/{name}.conf"
    old, new = _versions(rng)
    out = f"patches/{rng.randint(100, 999)}-{name}.patch"
    checks = VerifierTests(APPLIES)
    checks.unchanged(layout.path(old_rel), old)
    checks.unchanged(layout.path(new_rel), new)
    checks.add(
        "patch_turns_old_into_new",
        f"assert patched({layout.path(old_rel)!r}, {layout.path(out)!r}).read_text() == {new!r}",
    )
    spec = Spec(
        goal=f"save the changes from {layout.show(old_rel)} to {layout.show(new_rel)} as a unified diff in "
        f"{layout.show(out)}",
        notes=[f"{layout.show('patches')} does not exist yet.", "Leave both versions as they are."],
    )
    step = f"diff -u {layout.sh(old_rel)} {layout.sh(new_rel)} > {layout.sh(out)} || true"
    return TaskParts(spec, {old_rel: old, new_rel: new}, checks.render(), _into_new_folder(layout, out, step))


def restore_copy(rng: random.Random, layout: Layout) -> TaskParts:
    rel, patch_rel, old, new, patch = _given_patch(rng, layout)
    out = f"{layout.folder('restored', 'restored files')}/{rel.rsplit('/', 1)[1]}"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), new)
    checks.unchanged(layout.path(patch_rel), patch)
    checks.unchanged(layout.path(out), old)
    spec = Spec(
        goal=f"write the version of {layout.show(rel)} from before {layout.show(patch_rel)} was applied to "
        f"{layout.show(out)}",
        inputs=[f"The patch has already been applied to {layout.show(rel)}"],
        notes=[f"{layout.show(rel)} itself must stay patched.", "The folder of the result does not exist yet."],
    )
    step = f"patch -R -o {layout.sh(out)} {layout.sh(rel)} < {layout.sh(patch_rel)}"
    return TaskParts(spec, {rel: new, patch_rel: patch}, checks.render(), _into_new_folder(layout, out, step))


def added_rows(rng: random.Random, layout: Layout) -> TaskParts:
    names = people(rng, 12)
    old_rows = [f"{i + 1},{n},{rng.randint(10, 99)}" for i, n in enumerate(names[:8])]
    new_rows = [r for r in old_rows if rng.random() > 0.2]
    added = [f"{20 + i},{n},{rng.randint(10, 99)}" for i, n in enumerate(names[8 : 8 + rng.randint(2, 4)])]
    for row in added:
        new_rows.insert(rng.randrange(len(new_rows) + 1), row)
    added = [r for r in new_rows if r not in old_rows]
    folder = layout.folder("exports", "monthly exports")
    old_rel, new_rel = f"{folder}/january.csv", f"{folder}/february.csv"
    old_text = "id,name,score\n" + "".join(r + "\n" for r in old_rows)
    new_text = "id,member,score\n" + "".join(r + "\n" for r in new_rows)  # the header was renamed too
    checks = VerifierTests()
    checks.lines(layout.path("added.txt"), added)
    checks.unchanged(layout.path(old_rel), old_text)
    checks.unchanged(layout.path(new_rel), new_text)
    spec = Spec(
        goal=f"write the data rows that are in {layout.show(new_rel)} but not in {layout.show(old_rel)} to "
        f"{layout.show('added.txt')}",
        inputs=["Both are CSV files with a header line, and the header changed between them"],
        output="those rows, unchanged, in the order of the newer file",
        notes=["The header line is not a data row."],
    )
    step = (
        f"diff <(tail -n +2 {layout.sh(old_rel)}) <(tail -n +2 {layout.sh(new_rel)}) | sed -n 's/^> //p' "
        f"> {layout.sh('added.txt')}"
    )
    return TaskParts(spec, {old_rel: old_text, new_rel: new_text}, checks.render(), [step])


def find_target(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("candidates", "candidate files")
    names = [f"{w}.conf" for w in words(rng, 3)]
    texts = {n: _versions(rng) for n in names}  # unrelated contents: the patch fits only one
    target = rng.choice(names)
    old, new = texts[target]
    patch = _unified(old, new, "settings.conf.orig", "settings.conf")
    files = {f"{folder}/{n}": texts[n][0] for n in names}
    patch_rel = "fix.patch"
    checks = VerifierTests()
    checks.value(layout.path("target.txt"), target)
    for n in names:
        checks.unchanged(layout.path(f"{folder}/{n}"), new if n == target else texts[n][0])
    spec = Spec(
        goal=f"find the file of {layout.show(folder)} that {layout.show(patch_rel)} applies to, write its name to "
        f"{layout.show('target.txt')}, and apply the patch to that file",
        output="the file name alone in the answer file",
        notes=["The other files must stay unchanged."],
    )
    steps = [
        f'cd {layout.sh(folder)} && for f in *.conf; do if patch --dry-run -s "$f" < {layout.sh(patch_rel)} '
        f'> /dev/null 2>&1; then echo "$f"; fi; done > {layout.sh("target.txt")}',
        f'cd {layout.sh(folder)} && patch "$(cat {layout.sh("target.txt")})" < {layout.sh(patch_rel)}',
    ]
    return TaskParts(spec, {**files, patch_rel: patch}, checks.render(), steps)


FAMILY = Family(
    name="diff-patch",
    skill="compare files and folders with diff, apply and revert patches",
    templates={
        1: (
            Template("make-patch", "a unified diff between two versions into a .patch file", make_patch),
            Template("apply-patch", "apply a given patch", apply_patch),
            Template("revert-patch", "revert an applied patch", revert_patch),
            Template("which-differs", "the one file that differs between two folders", which_differs),
        ),
        2: (
            Template("tree-patch", "one patch for two folder trees, new files included", tree_patch),
            Template("patch-strip", "apply a patch with a/ b/ prefixes (-p1)", patch_strip),
            Template("only-in-one", "the files of one folder missing from another", only_in_one),
            Template("patch-keep-original", "apply a patch keeping the original (.orig)", patch_keep_original),
        ),
        3: (
            Template("patch-into-folder", "a diff into a folder that does not exist yet", patch_into_folder),
            Template("restore-copy", "an unpatched copy in a new folder, the file left patched", restore_copy),
            Template("added-rows", "the rows added between two CSVs whose header changed", added_rows),
            Template("find-target", "which file a patch applies to, then apply it", find_target),
        ),
    },
)
