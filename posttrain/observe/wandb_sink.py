"""Weights & Biases: every numeric value of a step's record logged at its step.

Offline by default (`[logging] wandb_mode = "offline"`): the run is written under
RUN_DIR/wandb/offline-run-*/ with no network and no account; `wandb sync RUN_DIR/wandb/offline-run-*`
uploads it later. "online" logs live (it needs `wandb login` or WANDB_API_KEY). The run's
resolved config is the W&B run config. W&B does not resume an offline run: a resumed posttrain
run starts a new W&B run that continues from the first step it redoes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class WandbSink:
    def __init__(self, directory: Path, name: str, config: dict[str, Any], project: str, mode: str) -> None:
        import wandb

        directory.mkdir(parents=True, exist_ok=True)
        settings = wandb.Settings(
            silent=True,
            console="off",  # leave the terminal to posttrain's own progress display
            disable_git=True,
            save_code=False,
            x_disable_stats=True,
            x_disable_machine_info=True,
            x_save_requirements=False,
        )
        self.run = wandb.init(
            project=project, dir=str(directory.parent), name=name, config=config, mode=mode, settings=settings
        )

    def write(self, record: dict[str, Any]) -> None:
        values = {
            key: value
            for key, value in record.items()
            if key != "step" and isinstance(value, int | float) and not isinstance(value, bool)
        }
        self.run.log(values, step=int(record["step"]))

    def close(self) -> None:
        self.run.finish()
