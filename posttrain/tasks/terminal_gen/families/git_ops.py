"""Git: commit a file, branch and commit, restore a deleted file from history. The repository
is built at image build time with fixed identities and dates."""

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


FAMILY = Family(
    name="git",
    skill="commit, branch and restore files with git",
    templates={
        1: (Template("commit-new", "commit one new file", commit_new),),
        2: (Template("branch-commit", "branch, switch and commit a change", branch_commit),),
        3: (
            Template(
                "restore-deleted",
                "restore a file deleted in the last commit (a name with a space) without rewriting history",
                restore_deleted,
            ),
        ),
    },
)
