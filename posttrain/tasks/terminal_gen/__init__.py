"""Generated terminal task families: seeded generators of complete Harbor task directories.

    from posttrain.tasks.terminal_gen import FAMILIES, generate, write_task, TerminalGenSource

    task = generate("text-processing", difficulty=2, seed=17)   # a GeneratedTask
    write_task(task, Path("out"))                               # out/text-processing-d2-s17/
    source = TerminalGenSource("term", ["git", "sqlite"], [1, 2, 3], seed=0, size=1000)
    source.get(5)                                               # a Task loaded from the cache

Each family (families/, one module each) builds an instruction, the files under /app, the
tests (expected values computed from the generated data) and a reference solution of one bash
command per step: 1 step at difficulty 1, up to 2 at 2, up to 4 at 3 (with a trap: a header
line, a name with a space, a folder that does not exist yet).
"""

from posttrain.tasks.terminal_gen.generated_task import DIFFICULTIES, Family, GeneratedTask
from posttrain.tasks.terminal_gen.registry import FAMILIES, family_names, generate
from posttrain.tasks.terminal_gen.source import TerminalGenSource
from posttrain.tasks.terminal_gen.task_directory import write_task

__all__ = [
    "DIFFICULTIES",
    "FAMILIES",
    "Family",
    "GeneratedTask",
    "TerminalGenSource",
    "family_names",
    "generate",
    "write_task",
]
