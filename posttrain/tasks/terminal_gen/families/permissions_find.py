"""Permissions and find: make a script executable, chmod what find selects, audit and fix
world-writable files."""

from __future__ import annotations

import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words


def _script(rng: random.Random) -> str:
    return f"#!/bin/bash\necho {rng.choice(words(rng, 1))} {rng.randint(1, 99)}\n"


def _executable_checks(layout: Layout, files: dict[str, str], scripts: list[str], plain: list[str]) -> VerifierTests:
    """The scripts became executable, the plain files did not, and no content changed (a
    rewritten file could come out executable too)."""
    checks = VerifierTests()
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
    for path in scripts:
        checks.add("executable", f"assert mode({layout.path(path)!r}) & stat.S_IXUSR")
    for path in plain:
        checks.add("not_executable", f"assert mode({layout.path(path)!r}) & 0o111 == 0")
    return checks


def chmod_one(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    content = _script(rng)
    checks = VerifierTests()
    checks.unchanged(layout.path(script), content)
    checks.add("owner_can_run", f"assert mode({layout.path(script)!r}) & stat.S_IXUSR")
    return TaskParts(
        instruction=Spec(goal=f"make the script {layout.show(script)} executable"),
        files={script: content},
        tests=checks.render(),
        steps=[f"chmod +x {layout.sh(script)}"],
    )


def chmod_found(rng: random.Random, layout: Layout) -> TaskParts:
    tool = layout.folder(rng.choice(("tools", "scripts", "bin-src")), "shell tools")
    names = words(rng, 6)
    scripts = [f"{tool}/{names[0]}.sh", f"{tool}/{names[1]}/{names[2]}.sh", f"{tool}/{names[1]}/deep/{names[3]}.sh"]
    plain = [f"{tool}/{names[4]}.txt", f"{tool}/{names[1]}/{names[5]}.conf"]
    files = {p: _script(rng) for p in scripts} | {p: f"{rng.randint(1, 9)}\n" for p in plain}
    checks = _executable_checks(layout, files, scripts, plain)
    return TaskParts(
        instruction=Spec(
            goal=f"make every .sh file under {layout.show(tool)} (at any depth) executable",
            notes=["Other files must stay non-executable."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"find {layout.sh(tool)} -name '*.sh' -exec chmod +x {{}} +"],
    )


def _report_then_act(
    layout: Layout,
    files: dict,
    checks: VerifierTests,
    goal: str,
    find: str,
    act: str,
    report: str,
    notes: list[str],
    setup: list[str],
) -> TaskParts:
    """List what `find` selects, sorted, into `report` (in a folder that does not exist yet),
    then run the same find with the action `act` on it."""
    folder = report.rsplit("/", 1)[0]
    spec = Spec(
        goal,
        output="absolute paths, sorted, one per line",
        notes=[f"{layout.show(folder)} does not exist yet.", *notes],
    )
    steps = [f"mkdir -p {layout.sh(folder)}", f"{find} | sort > {layout.sh(report)}", f"{find} {act}"]
    return TaskParts(spec, files, checks.render(), steps, setup)


def world_writable(rng: random.Random, layout: Layout) -> TaskParts:
    names = words(rng, 5)
    paths = [
        f"share/{names[0]}.txt",
        f"share/{names[1]} notes.txt",
        f"share/{names[2]}/{names[3]}.cfg",
        f"share/{names[4]}.md",
    ]
    files = {p: f"{' '.join(words(rng, 3))}\n" for p in paths}
    risky = sorted(rng.sample(paths, 2))
    checks = VerifierTests()
    checks.lines(layout.path("audit/world_writable.txt"), sorted(layout.path(p) for p in risky))
    for path in paths:
        checks.add("mode", f"assert mode({layout.path(path)!r}) == 0o644")
    goal = (
        f"write the full paths of the world-writable files under {layout.show('share')} to "
        f"{layout.show('audit/world_writable.txt')}, then remove write permission for others from them"
    )
    find = f"find {layout.sh('share')} -type f -perm -o+w"
    setup = ["chmod o+w " + " ".join(shlex.quote(layout.path(p)) for p in risky)]
    return _report_then_act(
        layout, files, checks, goal, find, "-exec chmod o-w {} +", "audit/world_writable.txt", [], setup
    )


def make_private(rng: random.Random, layout: Layout) -> TaskParts:
    secret = f"{layout.folder('keys', 'secret keys')}/{stem(rng)}.key"
    content = f"{rng.getrandbits(64):016x}\n"
    checks = VerifierTests()
    checks.unchanged(layout.path(secret), content)
    checks.add("owner_only", f"assert mode({layout.path(secret)!r}) == 0o600")
    return TaskParts(
        instruction=Spec(
            goal=f"restrict {layout.show(secret)} so that only its owner can read and write it",
            output="mode 600: no permissions for group and others, and not executable",
        ),
        files={secret: content},
        tests=checks.render(),
        steps=[f"chmod 600 {layout.sh(secret)}"],
    )


def remove_exec(rng: random.Random, layout: Layout) -> TaskParts:
    name = f"{stem(rng)}.csv"
    content = "".join(f"{w},{rng.randint(1, 99)}\n" for w in words(rng, 4))
    checks = VerifierTests()
    checks.unchanged(layout.path(name), content)
    checks.add("not_executable", f"assert mode({layout.path(name)!r}) & 0o111 == 0")
    checks.add("still_readable", f"assert mode({layout.path(name)!r}) & stat.S_IRUSR")
    return TaskParts(
        instruction=Spec(
            goal=f"remove the execute permission from {layout.show(name)} for everyone",
            inputs=[f"{layout.show(name)} is a data file that was made executable by mistake"],
        ),
        files={name: content},
        tests=checks.render(),
        steps=[f"chmod a-x {layout.sh(name)}"],
        setup=[f"chmod 755 {layout.sh(name)}"],
    )


def _found_paths(layout: Layout, files: dict[str, str], found: list[str], what: str, find: str, out: str) -> TaskParts:
    """A template whose answer is the sorted absolute paths `find` prints, written to `out`."""
    checks = VerifierTests()
    checks.lines(layout.path(out), sorted(layout.path(p) for p in found))
    spec = Spec(f"write the paths of {what} to {layout.show(out)}", output="absolute paths, sorted, one per line")
    return TaskParts(spec, files, checks.render(), [f"{find} | sort > {layout.sh(out)}"])


def find_by_name(rng: random.Random, layout: Layout) -> TaskParts:
    tree = layout.folder("srv", "server files")
    names = words(rng, 6)
    backups = [f"{tree}/{names[0]}.bak", f"{tree}/{names[1]}/{names[2]}.bak", f"{tree}/{names[1]}/old/{names[3]}.bak"]
    others = [f"{tree}/{names[4]}.conf", f"{tree}/{names[1]}/{names[5]}.bak.txt"]
    files = {p: f"{rng.randint(1, 999)}\n" for p in backups + others}
    what = f"every file under {layout.show(tree)} whose name ends in .bak"
    return _found_paths(layout, files, backups, what, f"find {layout.sh(tree)} -type f -name '*.bak'", "backups.txt")


def find_large(rng: random.Random, layout: Layout) -> TaskParts:
    tree = layout.folder("media", "media files")
    names = words(rng, 7)
    sizes = {n: rng.choice((rng.randint(100, 4000), rng.randint(12000, 30000))) for n in names}
    sizes[names[0]], sizes[names[1]] = 20000, 500  # at least one of each
    files = {f"{tree}/{'clips/' if i % 2 else ''}{n}.bin": "x" * sizes[n] for i, n in enumerate(names)}
    large = [p for p, c in files.items() if len(c) > 8192]
    what = f"the files under {layout.show(tree)} (at any depth) larger than 8 KiB"
    return _found_paths(layout, files, large, what, f"find {layout.sh(tree)} -type f -size +8k", "large.txt")


def normalize_modes(rng: random.Random, layout: Layout) -> TaskParts:
    tree = layout.folder("www", "web root")
    names = words(rng, 6)
    dirs = [tree, f"{tree}/{names[0]}", f"{tree}/{names[0]}/{names[1]}", f"{tree}/{names[2]}"]
    files = {f"{d}/{n}.html": f"<p>{n}</p>\n" for d, n in zip(dirs, names[2:])}
    checks = VerifierTests()
    for d in dirs:
        checks.add("dir_mode", f"assert mode({layout.path(d)!r}) == 0o755")
    for path in files:
        checks.add("file_mode", f"assert mode({layout.path(path)!r}) == 0o644")
    odd = " ".join(shlex.quote(layout.path(p)) for p in list(files)[:2])
    last = shlex.quote(layout.path(list(files)[-1]))
    return TaskParts(
        instruction=Spec(
            goal=f"give every directory under {layout.show(tree)} (itself included) mode 755 and every file mode 644",
        ),
        files=files,
        tests=checks.render(),
        steps=[
            f"find {layout.sh(tree)} -type d -exec chmod 755 {{}} +",
            f"find {layout.sh(tree)} -type f -exec chmod 644 {{}} +",
        ],
        setup=[f"chmod 700 {layout.sh(dirs[2])} && chmod 777 {odd} && chmod 600 {last}"],
    )


def count_found(rng: random.Random, layout: Layout) -> TaskParts:
    tree = layout.folder("logs", "old logs")
    names = words(rng, 8)
    files = {}
    for i, n in enumerate(names):
        sub = ("", f"{names[0]}/", f"{names[0]}/{names[1]}/")[i % 3]
        files[f"{tree}/{sub}{n}.{'log' if i % 4 else 'txt'}"] = f"{n}\n"
    checks = VerifierTests()
    checks.value(layout.path("log_count.txt"), str(sum(p.endswith(".log") for p in files)))
    return TaskParts(
        instruction=Spec(
            goal=f"count the .log files under {layout.show(tree)}, at any depth, and write the count to "
            f"{layout.show('log_count.txt')}",
            output="just the integer",
        ),
        files=files,
        tests=checks.render(),
        steps=[f"find {layout.sh(tree)} -type f -name '*.log' | wc -l > {layout.sh('log_count.txt')}"],
    )


def empty_dirs(rng: random.Random, layout: Layout) -> TaskParts:
    tree = layout.folder("cache", "build cache")
    names = words(rng, 7)
    empty = [f"{tree}/{names[0]}", f"{tree}/{names[1]}/{names[2]} tmp", f"{tree}/{names[3]}/{names[4]}"]
    files = {
        f"{tree}/{names[1]}/keep.txt": "1\n",
        f"{tree}/{names[3]}/keep.txt": "2\n",
        f"{tree}/{names[5]}/a.txt": "3\n",
    }
    checks = VerifierTests()
    checks.lines(layout.path("report/empty_dirs.txt"), sorted(layout.path(d) for d in empty))
    for d in empty:
        checks.add("removed", f"assert not Path({layout.path(d)!r}).exists()")
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
    report = "report/empty_dirs.txt"
    goal = f"list the empty directories under {layout.show(tree)} in {layout.show(report)}, then delete them"
    find = f"find {layout.sh(tree)} -type d -empty"
    setup = ["mkdir -p " + " ".join(shlex.quote(layout.path(d)) for d in empty)]
    notes = ["Directories that hold files stay."]
    return _report_then_act(layout, files, checks, goal, find, "-delete", report, notes, setup)


def shebang_executable(rng: random.Random, layout: Layout) -> TaskParts:
    tree = layout.folder("tools", "admin tools")
    names = words(rng, 6)
    scripts = [f"{tree}/{names[0]}", f"{tree}/{names[1]} helper", f"{tree}/{names[2]}/{names[3]}"]
    plain = [f"{tree}/{names[4]}", f"{tree}/{names[2]}/{names[5]}"]
    files = {p: _script(rng) for p in scripts} | {p: f"value {rng.randint(1, 9)}\n" for p in plain}
    checks = _executable_checks(layout, files, scripts, plain)
    return TaskParts(
        instruction=Spec(
            goal=f"make executable every file under {layout.show(tree)} (at any depth) that starts with a #! line",
            inputs=["The files have no extensions; some names contain spaces."],
            notes=["Files without a #! line must stay non-executable."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"grep -rl '^#!' {layout.sh(tree)} | xargs -d '\\n' chmod +x"],
    )


def copy_keeping_modes(rng: random.Random, layout: Layout) -> TaskParts:
    src = layout.folder("deploy", "deploy scripts")
    names = words(rng, 5)
    scripts = [f"{names[0]}.sh", f"{names[1]}/{names[2]} run.sh"]
    data = [f"{names[3]}.conf", f"{names[1]}/{names[4]}.txt"]
    files = {f"{src}/{p}": _script(rng) for p in scripts} | {f"{src}/{p}": f"{rng.randint(1, 9)}\n" for p in data}
    dest = f"release/{names[0]}"
    checks = VerifierTests()
    for p in scripts:
        checks.unchanged(layout.path(f"{dest}/{p}"), files[f"{src}/{p}"])
        checks.add("still_executable", f"assert mode({layout.path(f'{dest}/{p}')!r}) & stat.S_IXUSR")
    for p in data:
        checks.unchanged(layout.path(f"{dest}/{p}"), files[f"{src}/{p}"])
        checks.add("still_plain", f"assert mode({layout.path(f'{dest}/{p}')!r}) & 0o111 == 0")
    return TaskParts(
        instruction=Spec(
            goal=f"copy everything in {layout.show(src)} into a new directory {layout.show(dest)}, keeping the "
            "subdirectories and each file's permissions",
            notes=[f"{layout.show('release')} does not exist yet.", "The scripts must stay executable."],
        ),
        files=files,
        tests=checks.render(),
        steps=[f"mkdir -p {layout.sh(dest)}", f"cp -a {layout.sh(src)}/. {layout.sh(dest)}/"],
        setup=["chmod +x " + " ".join(shlex.quote(layout.path(f"{src}/{p}")) for p in scripts)],
    )


FAMILY = Family(
    name="permissions-find",
    skill="read and change file permissions; select files with find",
    templates={
        1: (
            Template("chmod-one", "chmod one script", chmod_one),
            Template("make-private", "chmod 600 a secret", make_private),
            Template("remove-exec", "remove a wrong execute bit", remove_exec),
            Template("find-by-name", "find files by name pattern at any depth", find_by_name),
        ),
        2: (
            Template("chmod-found", "chmod every file find selects by name, at any depth", chmod_found),
            Template("find-large", "find files by size", find_large),
            Template("normalize-modes", "755 for directories, 644 for files", normalize_modes),
            Template("count-found", "count the files find selects", count_found),
        ),
        3: (
            Template(
                "world-writable",
                "list the world-writable files (a name with a space) into a new folder, then fix them",
                world_writable,
            ),
            Template("copy-keeping-modes", "copy a tree into a new folder keeping permissions", copy_keeping_modes),
            Template("empty-dirs", "list then delete empty directories (a name with a space)", empty_dirs),
            Template(
                "shebang-executable", "chmod the files that start with #! (no extensions, spaces)", shebang_executable
            ),
        ),
    },
)
