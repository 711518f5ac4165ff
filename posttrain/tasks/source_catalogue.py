"""Every kind of task source a [[domains]] entry (or `posttrain eval --tasks`) can name, with
what each accepts: the names of the generated ones (every reasoning-gym generator, every
terminal-gen family, the scene difficulties), the paths of the others. `posttrain tasks
sources` prints it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SourceKind:
    source: str  # how a config writes it
    about: str
    accepts: list[str]  # the names it takes after the prefix; [] for a path


def source_catalogue() -> list[SourceKind]:
    from reasoning_gym.factory import DATASETS

    from posttrain.tasks.reasoning_gym_import import import_reasoning_gym
    from posttrain.tasks.scene import MAX_DIFFICULTY
    from posttrain.tasks.terminal_gen import FAMILIES

    import_reasoning_gym()  # registers the generators in DATASETS
    return [
        SourceKind(
            "reasoning-gym:<generator>",
            "procedurally generated answer tasks; [[domains]] params are the generator's own",
            sorted(DATASETS),
        ),
        SourceKind(
            "terminal-gen:<family>[,<family>...]",
            'generated terminal tasks (kind = "terminal"; difficulty = 1, 2, 3); "all" takes every family',
            ["all", *FAMILIES],
        ),
        SourceKind(
            "scene:<difficulty>[,<difficulty>...]",
            "3D scene layouts (docs/scene.md)",
            [str(d) for d in range(1, MAX_DIFFICULTY + 1)],
        ),
        SourceKind("jsonl:<path> or <path>.jsonl", "your tasks: one JSON object a line (id, prompt, answer)", []),
        SourceKind("parquet:<path>", "verl's format (prompt, reward_model.ground_truth, data_source)", []),
        SourceKind(
            "hf-dataset:<dir or data file>",
            "a datasets save_to_disk directory, or a local .parquet/.jsonl/.json/.csv (prompt_column, answer_column)",
            [],
        ),
        SourceKind("harbor:<dir>", 'terminal tasks in Harbor format, a folder of task folders (kind = "terminal")', []),
    ]
