"""Generated terminal task families: seeded generators of complete Harbor task directories.

    from posttrain.tasks.terminal_gen import FAMILIES, generate, write_task, TerminalGenSource

    task = generate("text-processing", difficulty=2, seed=17)   # a GeneratedTask
    task = generate("git", 1, 17, template="git/d1/tag-release", wording="story", root="/opt/work")
    write_task(task, Path("out"))                               # out/<family>-d<N>-<template>-s<seed>/
    source = TerminalGenSource("term", ["git", "sqlite"], [1, 2, 3], seed=0, size=1000)
    source.get(5)                                               # a Task loaded from the cache

A task is one point on four axes, each drawn from the seed unless pinned: the template (the
operation: each (family, difficulty) cell holds several, ids `<family>/d<N>/<slug>`), the
wording (wording.WORDINGS), the layout (layout.py: the root, a stated working directory with
relative paths, folder names with spaces) and the data. A template's builder returns the
structured instruction (instruction_spec.Spec), the files under the root, the tests (expected
values computed from the generated data) and a reference solution of one bash command per
step: 1 step at difficulty 1, up to 2 at 2, up to 4 at 3 (with a trap: a header line, a name
with a space, a folder that does not exist yet). heldout_split.py splits a domain's templates
and families into trained and held-out ones.

Adding a family (families/<name>.py, then one line in registry.py's FAMILIES):

    def count_level(rng: random.Random, layout: Layout) -> TaskParts:
        rel = f"{layout.folder('data', 'input data')}/{stem(rng)}.log"   # a path under the root
        ...                                                              # generate the data
        checks = VerifierTests()
        checks.unchanged(layout.path(rel), text)       # inputs left alone (absolute paths)
        checks.value(layout.path("count.txt"), str(n))  # exact values from the data
        return TaskParts(
            instruction=Spec(goal=f"count ... and write the count to {layout.show('count.txt')}",
                             inputs=[f"Each line of {layout.show(rel)} is: ..."], output="just the integer"),
            files={rel: text}, tests=checks.render(),
            steps=[f"grep -c ' ERROR ' {layout.sh(rel)} > {layout.sh('count.txt')}"])

    FAMILY = Family(name="text-processing", skill="...", templates={
        1: (Template("count-level", "count the lines of one level", count_level), ...),
        2: (...), 3: (...)})

Rules a template keeps: every path goes through the layout (`layout.path` in tests, `layout.sh`
in steps and setup commands, `layout.show` in the instruction), never a literal /app; the goal
is an imperative clause in lower case without a final period, inputs and notes are sentences,
output is a noun phrase (every wording must read well with them); the tests fail when nothing is
done; a new template goes at the end of its cell (the first keeps its instances' data). The
tests in tests/tasks/test_terminal_gen.py render every template in every wording and root, and
tests/tasks/test_terminal_gen_quality.py runs each one's solution and doing nothing in real
sandboxes.
"""

from posttrain.tasks.terminal_gen.generated_task import DIFFICULTIES, Family, GeneratedTask, Template
from posttrain.tasks.terminal_gen.registry import FAMILIES, family_names, generate, template_ids
from posttrain.tasks.terminal_gen.source import TerminalGenSource
from posttrain.tasks.terminal_gen.task_directory import write_task

__all__ = [
    "DIFFICULTIES",
    "FAMILIES",
    "Family",
    "GeneratedTask",
    "Template",
    "TerminalGenSource",
    "family_names",
    "generate",
    "template_ids",
    "write_task",
]
