"""Symbolic and hard links: create, repoint, read and list them, replace one by a copy, check
link counts. The setup commands make the links a task starts with."""

from __future__ import annotations

import posixpath
import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import WORDS, stem, words

# the tests compare where a link leads, whatever form (absolute or relative) its target takes
LINK_HELPERS = """
def leads_to(link, target):
    assert os.path.islink(link), f"{link} is not a symbolic link"
    assert os.path.realpath(link) == os.path.realpath(target), os.readlink(link)


def hard_linked(a, b):
    assert not os.path.islink(a) and not os.path.islink(b)
    assert os.path.samefile(a, b), f"{a} and {b} are different files"
"""


def _symlinks(layout: Layout, links: dict[str, str]) -> list[str]:
    """One setup command making each link (a path under the root) point at its target as given
    (a relative target is relative to the link's folder)."""
    folders = sorted({posixpath.dirname(layout.path(p)) for p in links})
    make = f"mkdir -p {' '.join(shlex.quote(f) for f in folders)}"
    return [" && ".join([make, *(f"ln -s {shlex.quote(t)} {shlex.quote(layout.path(p))}" for p, t in links.items())])]


def _text(rng: random.Random) -> str:
    return "".join(f"{w} {rng.randint(1, 99)}\n" for w in words(rng, 3))


LINK_COUNT = "the link count as just the integer"


def _link_count(layout: Layout, checks: VerifierTests, path: str, out: str) -> str:
    """Checks that `out` holds 2, the link count of `path` once it has a second name; returns the
    step that writes it."""
    checks.value(layout.path(out), "2")
    return f"stat -c %h {layout.sh(path)} > {layout.sh(out)}"


# ---- difficulty 1: one ln or readlink -------------------------------------------------------------


def make_symlink(rng: random.Random, layout: Layout) -> TaskParts:
    target = f"{layout.folder('shared', 'shared files')}/{stem(rng)}.conf"
    link = f"{stem(rng)}_link.conf"
    content = _text(rng)
    checks = VerifierTests(LINK_HELPERS)
    checks.add("link", f"leads_to({layout.path(link)!r}, {layout.path(target)!r})")
    checks.unchanged(layout.path(target), content)
    spec = Spec(goal=f"create a symbolic link {layout.show(link)} that points to {layout.show(target)}")
    return TaskParts(spec, {target: content}, checks.render(), [f"ln -s {layout.sh(target)} {layout.sh(link)}"])


def repoint(rng: random.Random, layout: Layout) -> TaskParts:
    releases = layout.folder("releases", "release builds")
    old, new = f"v{rng.randint(1, 4)}.{rng.randint(0, 9)}", f"v{rng.randint(5, 9)}.{rng.randint(0, 9)}"
    files = {f"{releases}/{new}/VERSION": f"{new}\n", f"{releases}/README": "builds\n"}
    checks = VerifierTests(LINK_HELPERS)
    checks.add("repointed", f"leads_to({layout.path('current')!r}, {layout.path(f'{releases}/{new}')!r})")
    spec = Spec(
        goal=f"make the symbolic link {layout.show('current')} point to {layout.show(f'{releases}/{new}')}",
        inputs=[f"{layout.show('current')} points to {layout.show(f'{releases}/{old}')}, which no longer exists"],
    )
    return TaskParts(
        spec,
        files,
        checks.render(),
        [f"ln -sfn {layout.sh(f'{releases}/{new}')} {layout.sh('current')}"],
        _symlinks(layout, {"current": layout.path(f"{releases}/{old}")}),
    )


def hard_link(rng: random.Random, layout: Layout) -> TaskParts:
    data = f"{layout.folder('data', 'data files')}/{stem(rng)}.db"
    twin = f"{stem(rng)}_twin.db"
    content = _text(rng)
    checks = VerifierTests(LINK_HELPERS)
    checks.add("same_file", f"hard_linked({layout.path(data)!r}, {layout.path(twin)!r})")
    checks.add("two_names", f"assert os.stat({layout.path(data)!r}).st_nlink == 2")
    checks.unchanged(layout.path(data), content)
    spec = Spec(
        goal=f"create a hard link {layout.show(twin)} to {layout.show(data)}",
        output="a second name for the same file, not a copy and not a symbolic link",
    )
    return TaskParts(spec, {data: content}, checks.render(), [f"ln {layout.sh(data)} {layout.sh(twin)}"])


def read_link(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("bin", "tool links")
    tool = rng.choice(WORDS)
    target = f"../opt/{tool}-{rng.randint(1, 9)}.{rng.randint(0, 20)}/bin/{tool}"
    link = f"{folder}/{tool}"
    out = "target.txt"
    checks = VerifierTests()
    checks.value(layout.path(out), target)
    checks.add("link_kept", f"assert os.readlink({layout.path(link)!r}) == {target!r}")
    spec = Spec(
        goal=f"write the target that the symbolic link {layout.show(link)} stores to {layout.show(out)}",
        output="the target exactly as the link holds it",
    )
    return TaskParts(
        spec,
        {f"{folder}/README": "links to tools\n"},
        checks.render(),
        [f"readlink {layout.sh(link)} > {layout.sh(out)}"],
        _symlinks(layout, {link: target}),
    )


# ---- difficulty 2: several links, a copy in place of a link, relative links --------------------------


def _linked_folder(rng: random.Random, layout: Layout) -> tuple[str, dict[str, str], dict[str, str], list[str]]:
    """A folder of links, some broken: (folder, files, {link: target}, the broken links)."""
    folder, store = layout.folder("links", "link farm"), "store"
    names = words(rng, rng.randint(5, 7))
    files = {f"{store}/{n}.txt": _text(rng) for n in names}
    broken = sorted(f"{folder}/{n}" for n in rng.sample(names, rng.randint(1, 3)))
    links = {f"{folder}/{n}": layout.path(f"{store}/{n}.txt") for n in names}
    for link in broken:
        del files[f"{store}/{link.rsplit('/', 1)[1]}.txt"]
    return folder, files, links, broken


def list_broken(rng: random.Random, layout: Layout) -> TaskParts:
    folder, files, links, broken = _linked_folder(rng, layout)
    out = "broken.txt"
    checks = VerifierTests()
    checks.lines(layout.path(out), sorted(link.rsplit("/", 1)[1] for link in broken))
    spec = Spec(
        goal=f"write the names of the broken symbolic links in {layout.show(folder)} to {layout.show(out)}",
        inputs=[f"{layout.show(folder)} holds only symbolic links; a broken one points at a file that does not exist"],
        output="link names only, one per line, sorted alphabetically",
    )
    step = f"find {layout.sh(folder)} -xtype l -printf '%f\\n' | sort > {layout.sh(out)}"
    return TaskParts(spec, files, checks.render(), [step], _symlinks(layout, links))


def replace_with_copy(rng: random.Random, layout: Layout) -> TaskParts:
    target = f"{layout.folder('templates', 'shared templates')}/{stem(rng)}.html"
    link = f"site/{target.rsplit('/', 1)[1]}"
    content = _text(rng)
    checks = VerifierTests()
    checks.add("not_a_link", f"assert not os.path.islink({layout.path(link)!r})")
    checks.unchanged(layout.path(link), content)
    checks.unchanged(layout.path(target), content)
    spec = Spec(
        goal=f"replace the symbolic link {layout.show(link)} by a regular file holding a copy of what it points to",
        notes=[f"The original {layout.show(target)} stays where it is."],
    )
    steps = [f"cp --remove-destination {layout.sh(target)} {layout.sh(link)}"]
    return TaskParts(
        spec,
        {target: content, "site/index.html": "<h1>site</h1>\n"},
        checks.render(),
        steps,
        _symlinks(layout, {link: layout.path(target)}),
    )


def link_scripts(rng: random.Random, layout: Layout) -> TaskParts:
    scripts = layout.folder("scripts", "team scripts")
    names = words(rng, rng.randint(3, 5))
    files = {f"{scripts}/{n}.sh": f"#!/bin/sh\necho {n}\n" for n in names}
    files[f"{scripts}/notes.txt"] = "not a script\n"
    checks = VerifierTests(LINK_HELPERS)
    checks.add(
        "only_scripts", f"assert sorted(os.listdir({layout.path('bin')!r})) == {sorted(f'{n}.sh' for n in names)!r}"
    )
    for n in names:
        checks.add("link", f"leads_to({layout.path(f'bin/{n}.sh')!r}, {layout.path(f'{scripts}/{n}.sh')!r})")
    spec = Spec(
        goal=f"create a new folder {layout.show('bin')} holding a symbolic link to every .sh file of "
        f"{layout.show(scripts)}, each with the script's name",
        notes=["Files that are not .sh get no link."],
    )
    steps = [f"mkdir -p {layout.sh('bin')}", f"ln -s {layout.sh(scripts)}/*.sh {layout.sh('bin')}/"]
    return TaskParts(spec, files, checks.render(), steps)


def relative_link(rng: random.Random, layout: Layout) -> TaskParts:
    data = f"{layout.folder('data', 'data files')}/{stem(rng)}.csv"
    link = "reports/latest.csv"
    content = _text(rng)
    checks = VerifierTests(LINK_HELPERS)
    checks.add("link", f"leads_to({layout.path(link)!r}, {layout.path(data)!r})")
    checks.add("relative", f"assert not os.readlink({layout.path(link)!r}).startswith('/')")
    checks.unchanged(layout.path(data), content)
    spec = Spec(
        goal=f"create a symbolic link {layout.show(link)} to {layout.show(data)} whose target is a relative path",
        notes=[
            f"{layout.show('reports')} does not exist yet.",
            "The link must keep working if the whole tree is moved elsewhere.",
        ],
    )
    steps = [f"mkdir -p {layout.sh('reports')}", f"ln -sr {layout.sh(data)} {layout.sh(link)}"]
    return TaskParts(spec, {data: content}, checks.render(), steps)


# ---- difficulty 3: duplicates to hard-link, links to repoint, links to materialise, a snapshot ------


def dedupe(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("photos", "photo library")
    names = words(rng, 4)
    original, duplicate = sorted([f"{folder}/{names[0]}.jpg", f"{folder}/{names[1]} copy.jpg"])
    lookalike = f"{folder}/{names[2]}.jpg"  # same size, other content: it must stay a file of its own
    content = "".join(rng.choice("abcdef") for _ in range(200)) + "\n"
    other = content[:-2] + ("z" if content[-2] != "z" else "y") + "\n"
    files = {original: content, duplicate: content, lookalike: other, f"{folder}/{names[3]}.jpg": _text(rng)}
    checks = VerifierTests(LINK_HELPERS)
    checks.add("deduplicated", f"hard_linked({layout.path(original)!r}, {layout.path(duplicate)!r})")
    checks.add("lookalike_apart", f"assert os.stat({layout.path(lookalike)!r}).st_nlink == 1")
    checks.unchanged(layout.path(original), content)
    checks.unchanged(layout.path(lookalike), other)
    spec = Spec(
        goal=f"{layout.show(folder)} holds exactly two files with identical content; replace the second of them "
        "(by name) with a hard link to the other, then write the number of names the file now has to "
        f"{layout.show('links.txt')}",
        output=LINK_COUNT,
        notes=["Some names contain spaces, and files of equal size are not always equal."],
    )
    steps = [f"cd {layout.sh(folder)} && md5sum *.jpg | sort", f"ln -f {layout.sh(original)} {layout.sh(duplicate)}"]
    return TaskParts(spec, files, checks.render(), [*steps, _link_count(layout, checks, original, "links.txt")])


def fix_links(rng: random.Random, layout: Layout) -> TaskParts:
    folder, old, new = layout.folder("links", "link farm"), "library/old", "library/current"
    names = [*words(rng, 3), f"{rng.choice(WORDS)} notes"]  # one name with a space
    files = {f"{new}/{n}.txt": _text(rng) for n in names}
    extra = f"{rng.choice(WORDS)}_keep"
    files[f"elsewhere/{extra}.txt"] = _text(rng)
    links = {f"{folder}/{n}.txt": layout.path(f"{old}/{n}.txt") for n in names}
    links[f"{folder}/{extra}.txt"] = layout.path(f"elsewhere/{extra}.txt")  # works already: leave it
    checks = VerifierTests(LINK_HELPERS)
    for n in names:
        checks.add("fixed", f"leads_to({layout.path(f'{folder}/{n}.txt')!r}, {layout.path(f'{new}/{n}.txt')!r})")
    checks.add(
        "kept",
        f"assert os.readlink({layout.path(f'{folder}/{extra}.txt')!r}) == {layout.path(f'elsewhere/{extra}.txt')!r}",
    )
    spec = Spec(
        goal=f"repoint every broken symbolic link in {layout.show(folder)} to the file of the same name in "
        f"{layout.show(new)}",
        inputs=[f"The broken links point into {layout.show(old)}, whose files moved to {layout.show(new)}"],
        notes=["Links that work already stay as they are; one name contains a space."],
    )
    steps = [
        f'cd {layout.sh(folder)} && for l in *; do if [ ! -e "$l" ]; then ln -sfn {layout.sh(new)}/"$l" "$l"; fi; done'
    ]
    return TaskParts(spec, files, checks.render(), steps, _symlinks(layout, links))


def materialize(rng: random.Random, layout: Layout) -> TaskParts:
    folder, files, links, broken = _linked_folder(rng, layout)
    plain = f"{folder}/local notes.txt"  # a regular file among the links, with a space
    files[plain] = _text(rng)
    working = [link for link in links if link not in broken]
    report = "report/broken.txt"
    checks = VerifierTests()
    checks.lines(layout.path(report), sorted(link.rsplit("/", 1)[1] for link in broken))
    remaining = sorted([link.rsplit("/", 1)[1] for link in working] + ["local notes.txt"])
    checks.add("remaining", f"assert sorted(os.listdir({layout.path(folder)!r})) == {remaining!r}")
    for link in working:
        checks.add("now_a_file", f"assert not os.path.islink({layout.path(link)!r})")
        checks.unchanged(layout.path(link), files[f"store/{link.rsplit('/', 1)[1]}.txt"])
    checks.unchanged(layout.path(plain), files[plain])
    spec = Spec(
        goal=f"in {layout.show(folder)}, write the names of the broken symbolic links to {layout.show(report)} and "
        "delete them, then replace every other symbolic link by a copy of the file it points to",
        output="link names one per line, sorted alphabetically, in the report",
        notes=[f"{layout.show('report')} does not exist yet.", "Regular files in the folder stay as they are."],
    )
    steps = [
        f"mkdir -p {layout.sh('report')}",
        f"find {layout.sh(folder)} -xtype l -printf '%f\\n' | sort > {layout.sh(report)}",
        f"find {layout.sh(folder)} -xtype l -delete",
        f'cd {layout.sh(folder)} && for l in *; do if [ -L "$l" ]; then '
        'cp --remove-destination "$(readlink -f "$l")" "$l"; fi; done',
    ]
    return TaskParts(spec, files, checks.render(), steps, _symlinks(layout, links))


def snapshot(rng: random.Random, layout: Layout) -> TaskParts:
    folder, snap = layout.folder("db", "databases"), f"snapshot {rng.randint(1, 28):02d}"
    names = words(rng, rng.randint(3, 5))
    files = {f"{folder}/{n}.db": _text(rng) for n in names}
    temp = f"{folder}/{rng.choice(WORDS)}.db-journal"
    files[temp] = "journal\n"
    first = sorted(names)[0]
    checks = VerifierTests(LINK_HELPERS)
    checks.add(
        "only_databases", f"assert sorted(os.listdir({layout.path(snap)!r})) == {sorted(f'{n}.db' for n in names)!r}"
    )
    for n in names:
        checks.add("linked", f"hard_linked({layout.path(f'{folder}/{n}.db')!r}, {layout.path(f'{snap}/{n}.db')!r})")
    checks.unchanged(layout.path(temp), "journal\n")
    spec = Spec(
        goal=f"create {layout.show(snap)} holding a hard link to every .db file of {layout.show(folder)} (same "
        f"names), then write the link count of {layout.show(f'{folder}/{first}.db')} to {layout.show('count.txt')}",
        output=LINK_COUNT,
        notes=["Journal files are not .db files; the snapshot folder does not exist yet and its name has a space."],
    )
    steps = [f"mkdir -p {layout.sh(snap)}", f"ln {layout.sh(folder)}/*.db {layout.sh(snap)}/"]
    return TaskParts(
        spec, files, checks.render(), [*steps, _link_count(layout, checks, f"{folder}/{first}.db", "count.txt")]
    )


FAMILY = Family(
    name="links",
    skill="create, repoint, list and replace symbolic and hard links",
    templates={
        1: (
            Template("make-symlink", "create a symbolic link", make_symlink),
            Template("repoint", "repoint a broken symbolic link", repoint),
            Template("hard-link", "create a hard link", hard_link),
            Template("read-link", "the target a link stores", read_link),
        ),
        2: (
            Template("list-broken", "the broken links of a folder", list_broken),
            Template("replace-with-copy", "replace a link by a copy of its target", replace_with_copy),
            Template("link-scripts", "a link to every script, in a new folder", link_scripts),
            Template("relative-link", "a link with a relative target, in a new folder", relative_link),
        ),
        3: (
            Template("dedupe", "hard-link a duplicate (a look-alike stays), report the link count", dedupe),
            Template("fix-links", "repoint the broken links, working ones stay", fix_links),
            Template("materialize", "report and delete broken links, copy the rest", materialize),
            Template("snapshot", "hard-link a file type into a new folder with a space, count links", snapshot),
        ),
    },
)
