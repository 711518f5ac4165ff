"""`posttrain tasks sources` lists every kind of source and what each accepts, by name."""

import json

from reasoning_gym.factory import DATASETS

from posttrain.tasks.terminal_gen import FAMILIES
from tests.cli.test_cli_errors import run_cli


def test_every_generator_and_family_is_listed_by_name():
    text = run_cli("tasks", "sources")
    assert text.returncode == 0, text.stderr
    listed = {name.strip() for line in text.stdout.splitlines() if line.startswith("  ") for name in line.split(",")}
    assert set(DATASETS) <= listed and set(FAMILIES) <= listed
    assert "basic_arithmetic" in listed and "reasoning-gym:<generator>" in text.stdout
    kinds = json.loads(run_cli("tasks", "sources", "--json").stdout)
    by_source = {kind["source"].split(":")[0]: kind for kind in kinds}
    assert sorted(by_source["reasoning-gym"]["accepts"]) == sorted(DATASETS)
    assert by_source["terminal-gen"]["accepts"] == ["all", *FAMILIES]
    assert {"jsonl", "parquet", "hf-dataset", "harbor", "scene"} <= set(by_source)
