"""Composite tasks: two or three operations of other families chained in one environment, with
a reference solution that looks before it acts and checks before it finishes.

A composite template names the templates it chains (`Template.uses`); each part is built with
the same layout and its own data, so the instruction asks for every part's result and the
tests check all of them. The reference steps are: list the tree (look), each part's steps in
order, list the tree with sizes and modes (check). 4 steps at difficulty 1 (two one-command
parts), up to 5 at 2, up to 6 at 3. The held-out split never trains on a composite that uses a
held-out template or family (heldout_split.py)."""

from __future__ import annotations

import random
import re

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import HEADER

MAX_STEPS = {1: 4, 2: 5, 3: 6}
LOOK_NOTE = "Look at the files before you change anything, and check your result before you finish."
_ATTEMPTS = 8  # fresh data for the parts until their files do not collide


def _part(template: str) -> Template:
    from posttrain.tasks.terminal_gen.registry import FAMILIES  # the registry imports this module

    family, level, slug = template.split("/")
    return next(t for t in FAMILIES[family].templates[int(level[1:])] if t.slug == slug)


def _merge_tests(rendered: list[str]) -> str:
    """One pytest file from the parts' files: one header, each part's tests renamed
    test_partN_*; a helper defined twice must be defined the same way."""
    body, helpers = [], {}
    for n, text in enumerate(rendered, 1):
        if not text.startswith(HEADER):
            raise AssertionError("composite: a part's tests do not start with the shared header")
        rest = text[len(HEADER) :]
        for block in re.split(r"\n(?=\S)", rest.strip("\n")):
            match = re.match(r"def (\w+)\(", block)
            if match and match.group(1).startswith("test_"):
                body.append(block.replace(f"def {match.group(1)}(", f"def test_part{n}_{match.group(1)[5:]}(", 1))
            elif block.strip():
                key = match.group(1) if match else block
                if key in helpers and helpers[key] != block:
                    raise AssertionError(f"composite: two parts define {key} differently")
                if key not in helpers:
                    helpers[key] = block
                    body.append(block)
    return HEADER + "".join("\n\n" + block.rstrip() + "\n" for block in body)


def _clause(spec: Spec) -> str:
    return f"{spec.goal} ({spec.output})" if spec.output else spec.goal


def chain(*templates: str):
    """A builder running the named templates' builders in one layout, each on its own data."""

    def build(rng: random.Random, layout: Layout) -> TaskParts:
        for _ in range(_ATTEMPTS):
            parts = [_part(t).build(random.Random(rng.getrandbits(64)), layout) for t in templates]
            paths = [p for part in parts for p in part.files]
            if len(paths) == len(set(paths)):
                break
        else:
            raise AssertionError(f"composite {'+'.join(templates)}: the parts' files keep colliding")
        goals = [_clause(p.instruction) for p in parts]
        spec = Spec(
            goal=", and then ".join(goals)
            if len(goals) == 2
            else ", then ".join(goals[:-1]) + ", and finally " + goals[-1],
            inputs=[s for p in parts for s in p.instruction.inputs],
            notes=[s for p in parts for s in p.instruction.notes] + [LOOK_NOTE],
        )
        steps = [f"ls -R {layout.sh()}", *(s for p in parts for s in p.steps), f"ls -lR {layout.sh()}"]
        files = {path: content for p in parts for path, content in p.files.items()}
        setup = [line for p in parts for line in p.setup]
        return TaskParts(spec, files, _merge_tests([p.tests for p in parts]), steps, setup)

    return build


def _template(slug: str, summary: str, *uses: str) -> Template:
    return Template(slug, summary, chain(*uses), uses=uses)


FAMILY = Family(
    name="composite",
    skill="chain two or three skills in one environment: look first, act, check before finishing",
    templates={
        1: (
            _template(
                "grep-then-chmod",
                "filter a log, then set a mode",
                "text-processing/d1/grep-level",
                "permissions-find/d1/chmod-one",
            ),
            _template(
                "column-then-backup",
                "extract a CSV column, then back up a file",
                "csv-json/d1/csv-column",
                "files-dirs/d1/copy-to-backup",
            ),
            _template(
                "replace-then-hash",
                "replace a word, then hash a file",
                "sed-edits/d1/replace-word",
                "checksums/d1/hash-file",
            ),
            _template(
                "weekday-then-link", "name a weekday, then make a symlink", "dates/d1/weekday", "links/d1/make-symlink"
            ),
            _template(
                "count-then-private",
                "count a level, then make a file private",
                "text-processing/d1/count-level",
                "permissions-find/d1/make-private",
            ),
            _template(
                "epoch-then-sums",
                "convert an epoch, then checksum a folder",
                "dates/d1/epoch-to-iso",
                "checksums/d1/sums-of-folder",
            ),
        ),
        2: (
            _template(
                "count-then-join",
                "count a status, then join files",
                "log-awk/d1/count-status",
                "files-dirs/d2/join-files",
            ),
            _template(
                "script-then-select",
                "write a greeting script, then select JSON rows",
                "script-write/d1/greeting",
                "csv-json/d2/select-sorted",
            ),
            _template(
                "crlf-then-top-ips", "fix line endings, then rank IPs", "line-endings/d1/crlf-sed", "log-awk/d2/top-ips"
            ),
            _template(
                "yaml-then-diff",
                "read a YAML value, then compare two folders",
                "ini-yaml/d1/yaml-top-value",
                "diff-patch/d2/only-in-one",
            ),
            _template(
                "first-then-filter",
                "take the first lines, then filter CSV rows",
                "text-processing/d1/first-lines",
                "csv-json/d2/csv-filter-rows",
            ),
            _template(
                "header-then-per-user",
                "insert a header, then count lines per user",
                "sed-edits/d1/insert-header",
                "text-processing/d2/lines-per-user",
            ),
        ),
        3: (
            _template(
                "count-set-duplicates",
                "count a level, set a value, find duplicates",
                "text-processing/d1/count-level",
                "sed-edits/d1/set-value",
                "checksums/d2/find-duplicates",
            ),
            _template(
                "objects-fix-move",
                "count JSON objects, fix a script, move files by extension",
                "csv-json/d1/count-objects",
                "script-fix/d1/off-by-one",
                "files-dirs/d2/move-by-extension",
            ),
            _template(
                "days-link-mean",
                "add days to a date, hard-link a file, average per path",
                "dates/d1/add-days",
                "links/d1/hard-link",
                "log-awk/d2/mean-per-path",
            ),
            _template(
                "newline-ini-total",
                "add a final newline, set an INI value, total per user",
                "line-endings/d1/final-newline",
                "ini-yaml/d2/set-in-section",
                "text-processing/d2/user-total",
            ),
        ),
    },
    max_steps=MAX_STEPS,
)
