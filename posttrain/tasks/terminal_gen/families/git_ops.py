"""Git: commit, branch, tag, merge, reword, ignore and restore files with history. The
repository is built at image build time with fixed identities and dates."""

from __future__ import annotations

import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words

IDENTITY = "git config user.name Dev && git config user.email dev@example.com"
DATES = "GIT_AUTHOR_DATE='@1700000000 +0000' GIT_COMMITTER_DATE='@1700000000 +0000'"
GIT_HELPERS = """
def git(*args):
    result = run('git', '-C', REPO, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def subjects(ref):
    return git('log', '--format=%s', ref).splitlines()
"""


def _history(rng: random.Random) -> tuple[dict[str, str], list[str]]:
    """Files and the commit messages that add them one by one."""
    names = words(rng, rng.randint(2, 4))
    files = {f"repo/{n}.py": f"{n.upper()} = {rng.randint(1, 99)}\n" for n in names}
    return files, [f"Add {n}" for n in names]


def _commit_each(files: dict[str, str], messages: list[str]) -> str:
    commands = [
        f"git add {shlex.quote(p.removeprefix('repo/'))} && {DATES} git commit -q -m {shlex.quote(m)}"
        for p, m in zip(files, messages)
    ]
    return " && ".join(commands)


def _checks(layout: Layout) -> VerifierTests:
    return VerifierTests(f"REPO = {layout.path('repo')!r}\n" + GIT_HELPERS)


def _repo_setup(layout: Layout, files: dict[str, str], messages: list[str], then: str = "") -> list[str]:
    script = f"cd {layout.sh('repo')} && git init -q -b main && {IDENTITY} && {_commit_each(files, messages)}"
    return [script + (f" && {then}" if then else "")]


def _common(rng: random.Random) -> tuple[dict[str, str], list[str], str]:
    files, messages = _history(rng)
    message = rng.choice(("Add notes", "Update config", "Fix typo", "Add helper")) + f" {rng.randint(2, 99)}"
    return files, messages, message


def commit_new(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, message = _common(rng)
    new = f"{stem(rng)}.txt"
    content = " ".join(words(rng, 5)) + "\n"
    checks = _checks(layout)
    checks.add("commit_on_top", f"assert subjects('main') == {[message, *reversed(messages)]!r}")
    checks.add("file_committed", f"assert git('show', {'HEAD:' + new!r}) == {content!r}")
    checks.add("tree_clean", "assert git('status', '--porcelain') == ''")
    return TaskParts(
        instruction=Spec(
            goal=f"commit the new file {new} in it with the message '{message}'",
            inputs=[f"{layout.show('repo')} is a git repository"],
        ),
        files={**files, f"repo/{new}": content},
        tests=checks.render(),
        steps=[f"cd {layout.sh('repo')} && git add {new} && git commit -m '{message}'"],
        setup=_repo_setup(layout, files, messages),
    )


def branch_commit(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, message = _common(rng)
    branch = f"feature/{rng.choice(words(rng, 1))}"
    changed = next(iter(files))
    limit = rng.randint(100, 999)
    path = changed.removeprefix("repo/")
    edited = files[changed] + f"LIMIT = {limit}\n"
    checks = _checks(layout)
    checks.add("change_committed", f"assert git('show', {branch + ':' + path!r}) == {edited!r}")
    checks.add("main_untouched", f"assert subjects('main') == {list(reversed(messages))!r}")
    checks.add("commit_on_branch", f"assert subjects({branch!r}) == {[message, *reversed(messages)]!r}")
    checks.add("on_branch", f"assert git('branch', '--show-current').strip() == {branch!r}")
    checks.add("tree_clean", "assert git('status', '--porcelain') == ''")
    return TaskParts(
        instruction=Spec(
            goal=f"create a branch {branch} from main, switch to it, and commit the change there with the message "
            f"'{message}'",
            inputs=[f"In the git repository {layout.show('repo')}, {path} has an uncommitted change"],
        ),
        files={**files},
        tests=checks.render(),
        steps=[
            f"cd {layout.sh('repo')} && git checkout -b {branch}",
            f"cd {layout.sh('repo')} && git commit -am '{message}'",
        ],
        setup=_repo_setup(layout, files, messages, then=f"echo 'LIMIT = {limit}' >> {path}"),
    )


def restore_deleted(rng: random.Random, layout: Layout) -> TaskParts:
    # a file with a space in its name, deleted in the last commit, back in a new commit
    files, messages, message = _common(rng)
    lost = f"docs/{rng.choice(words(rng, 1))} guide.md"
    content = f"# Guide\n\n{' '.join(words(rng, 6))}\n"
    all_files = {**files, f"repo/{lost}": content}
    all_messages = [*messages, "Add guide"]
    checks = _checks(layout)
    checks.add("history_kept", f"assert subjects('main') == {[message, 'Remove guide', *reversed(all_messages)]!r}")
    checks.add("file_restored", f"assert Path({layout.path('repo/' + lost)!r}).read_text() == {content!r}")
    checks.add("file_committed", f"assert git('show', {'HEAD:' + lost!r}) == {content!r}")
    return TaskParts(
        instruction=Spec(
            goal=f"restore '{lost}' from the commit before, and commit it with the message '{message}'",
            inputs=[f"In the git repository {layout.show('repo')}, the last commit deleted '{lost}'"],
            notes=["Do not rewrite history."],
        ),
        files=all_files,
        tests=checks.render(),
        steps=[
            f"cd {layout.sh('repo')} && git checkout HEAD~1 -- '{lost}'",
            f"cd {layout.sh('repo')} && git commit -m '{message}'",
        ],
        setup=_repo_setup(
            layout,
            all_files,
            all_messages,
            then=f"git rm -q {shlex.quote(lost)} && {DATES} git commit -q -m 'Remove guide'",
        ),
    )


def _repo_task(
    layout: Layout, spec: Spec, files: dict[str, str], checks: VerifierTests, steps: list[str], setup: list[str]
) -> TaskParts:
    """A task on the repository at repo/: the spec's inputs start with what it is."""
    inputs = [f"{layout.show('repo')} is a git repository", *spec.inputs]
    return TaskParts(Spec(spec.goal, inputs, spec.output, spec.notes), files, checks.render(), steps, setup)


def create_branch(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, _ = _common(rng)
    branch = f"release/{rng.randint(1, 9)}.{rng.randint(0, 9)}"
    checks = _checks(layout)
    checks.add("branch_at_main", f"assert git('rev-parse', {branch!r}) == git('rev-parse', 'main')")
    checks.add("still_on_main", "assert git('branch', '--show-current').strip() == 'main'")
    spec = Spec(f"create a branch named {branch} pointing at the current main commit", notes=["Stay on main."])
    return _repo_task(
        layout,
        spec,
        files,
        checks,
        [f"git -C {layout.sh('repo')} branch {branch}"],
        _repo_setup(layout, files, messages),
    )


def tag_release(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, _ = _common(rng)
    tag = f"v{rng.randint(1, 5)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
    checks = _checks(layout)
    checks.add("tagged", f"assert git('rev-parse', {tag + '^{commit}'!r}) == git('rev-parse', 'HEAD')")
    checks.add("history_kept", f"assert subjects('main') == {list(reversed(messages))!r}")
    spec = Spec(f"tag the latest commit of main as {tag}")
    return _repo_task(
        layout, spec, files, checks, [f"git -C {layout.sh('repo')} tag {tag}"], _repo_setup(layout, files, messages)
    )


def last_subject(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, _ = _common(rng)
    checks = _checks(layout)
    checks.value(layout.path("last_commit.txt"), messages[-1])
    spec = Spec(
        f"write the subject (first line of the message) of the latest commit to {layout.show('last_commit.txt')}",
        output="just that line",
    )
    steps = [f"git -C {layout.sh('repo')} log -1 --format=%s > {layout.sh('last_commit.txt')}"]
    return _repo_task(layout, spec, files, checks, steps, _repo_setup(layout, files, messages))


def discard_change(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, _ = _common(rng)
    changed = next(iter(files)).removeprefix("repo/")
    checks = _checks(layout)
    checks.add(
        "restored", f"assert Path({layout.path('repo/' + changed)!r}).read_text() == {files['repo/' + changed]!r}"
    )
    checks.add("tree_clean", "assert git('status', '--porcelain') == ''")
    checks.add("history_kept", f"assert subjects('main') == {list(reversed(messages))!r}")
    spec = Spec(
        f"throw away the uncommitted change to {changed}, so that it is as in the last commit",
        inputs=[f"{changed} has been edited but not committed"],
        notes=["Do not make a commit."],
    )
    setup = _repo_setup(layout, files, messages, then=f"echo 'BROKEN = True' >> {changed}")
    return _repo_task(layout, spec, files, checks, [f"cd {layout.sh('repo')} && git checkout -- {changed}"], setup)


def commit_count(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, _ = _common(rng)
    checks = _checks(layout)
    checks.value(layout.path("commit_count.txt"), str(len(messages)))
    spec = Spec(
        f"write the number of commits on the main branch to {layout.show('commit_count.txt')}",
        output="just the integer",
    )
    steps = [f"git -C {layout.sh('repo')} rev-list --count main > {layout.sh('commit_count.txt')}"]
    return _repo_task(layout, spec, files, checks, steps, _repo_setup(layout, files, messages))


def amend_message(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, message = _common(rng)
    checks = _checks(layout)
    checks.add("reworded", f"assert subjects('main') == {[message, *reversed(messages[:-1])]!r}")
    last = list(files)[-1].removeprefix("repo/")
    checks.add("same_content", f"assert git('show', {'HEAD:' + last!r}) == {files['repo/' + last]!r}")
    spec = Spec(
        f"change the message of the latest commit to '{message}'",
        notes=["Keep its content; the older commits stay as they are."],
    )
    steps = [f"cd {layout.sh('repo')} && git commit --amend -m '{message}'"]
    return _repo_task(layout, spec, files, checks, steps, _repo_setup(layout, files, messages))


def ignore_logs(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, message = _common(rng)
    log = f"{rng.choice(words(rng, 1))} run.log"
    files[f"repo/{log}"] = "started\n"
    messages = [*messages, "Add log by mistake"]
    checks = _checks(layout)
    checks.add("untracked", f"assert {log!r} not in git('ls-files').splitlines()")
    checks.add("ignore_committed", "assert '*.log' in git('show', 'HEAD:.gitignore').splitlines()")
    checks.add("kept_on_disk", f"assert Path({layout.path('repo/' + log)!r}).read_text() == 'started\\n'")
    checks.add("tree_clean", "assert git('status', '--porcelain') == ''")
    checks.add("history", f"assert subjects('main')[0] == {message!r} and len(subjects('main')) == {len(messages) + 1}")
    spec = Spec(
        f"stop tracking '{log}' and make git ignore every .log file, then commit that with the message '{message}'",
        inputs=[f"'{log}' was committed by mistake"],
        notes=[
            "Keep the file itself on disk.",
            "Add the ignore rule *.log to a .gitignore at the top of the repository.",
        ],
    )
    repo = layout.sh("repo")
    steps = [
        f"cd {repo} && echo '*.log' >> .gitignore",
        f"cd {repo} && git rm -q --cached '{log}'",
        f"cd {repo} && git add .gitignore && git commit -m '{message}'",
    ]
    return _repo_task(layout, spec, files, checks, steps, _repo_setup(layout, files, messages))


def merge_branch(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, _ = _common(rng)
    branch = f"feature/{rng.choice(words(rng, 1))}"
    extra = f"{stem(rng)}.py"
    content = f"VALUE = {rng.randint(1, 99)}\n"
    then = (
        f"git checkout -q -b {branch} && echo {shlex.quote(content.strip())} > {extra} && git add {extra} && "
        f"{DATES} git commit -q -m 'Add {extra}' && git checkout -q main"
    )
    checks = _checks(layout)
    checks.add("merged", f"assert git('show', {'main:' + extra!r}) == {content!r}")
    checks.add("on_main", "assert git('branch', '--show-current').strip() == 'main'")
    checks.add("tree_clean", "assert git('status', '--porcelain') == ''")
    checks.add("kept_history", f"assert subjects('main')[-{len(messages)}:] == {list(reversed(messages))!r}")
    spec = Spec(f"merge the branch {branch} into main", notes=["Finish on main with a clean working tree."])
    steps = [f"cd {layout.sh('repo')} && git checkout main && git merge --no-edit {branch}"]
    return _repo_task(layout, spec, files, checks, steps, _repo_setup(layout, files, messages, then=then))


def old_version(rng: random.Random, layout: Layout) -> TaskParts:
    files, messages, _ = _common(rng)
    target = list(files)[0].removeprefix("repo/")
    old = files["repo/" + target]
    new = f"{target.split('.')[0].upper()} = {rng.randint(100, 999)}\n"
    then = f"echo {shlex.quote(new.strip())} > {target} && {DATES} git commit -q -am 'Change {target}'"
    out = f"{layout.folder('old', 'old versions')}/{target}.orig"
    checks = _checks(layout)
    checks.add("old_saved", f"assert Path({layout.path(out)!r}).read_text() == {old!r}")
    checks.add("current_kept", f"assert Path({layout.path('repo/' + target)!r}).read_text() == {new!r}")
    checks.add("tree_clean", "assert git('status', '--porcelain') == ''")
    spec = Spec(
        f"save the version of {target} from before the last commit as {layout.show(out)}",
        inputs=[f"The last commit changed {target}"],
        notes=[f"{layout.show(out.rsplit('/', 1)[0])} does not exist yet.", "Leave the repository as it is."],
    )
    steps = [
        f"mkdir -p {layout.sh(out.rsplit('/', 1)[0])}",
        f"git -C {layout.sh('repo')} show HEAD~1:{target} > {layout.sh(out)}",
    ]
    return _repo_task(layout, spec, files, checks, steps, _repo_setup(layout, files, messages, then=then))


FAMILY = Family(
    name="git",
    skill="commit, branch and restore files with git",
    templates={
        1: (
            Template("commit-new", "commit one new file", commit_new),
            Template("create-branch", "create a branch without switching", create_branch),
            Template("tag-release", "tag the latest commit", tag_release),
            Template("last-subject", "read the latest commit's subject", last_subject),
        ),
        2: (
            Template("branch-commit", "branch, switch and commit a change", branch_commit),
            Template("discard-change", "discard an uncommitted change", discard_change),
            Template("commit-count", "count the commits of a branch", commit_count),
            Template("amend-message", "reword the latest commit", amend_message),
        ),
        3: (
            Template(
                "restore-deleted",
                "restore a file deleted in the last commit (a name with a space) without rewriting history",
                restore_deleted,
            ),
            Template("ignore-logs", "untrack a file and ignore its kind (a name with a space)", ignore_logs),
            Template("merge-branch", "merge a feature branch into main", merge_branch),
            Template("old-version", "save a file's previous version into a new folder", old_version),
        ),
    },
)
