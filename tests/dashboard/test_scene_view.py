"""A scene-domain sample of a training run, drawn by the dashboard as the scene page: the task
rebuilt from the run's config, the stored reply scored and listed beside the view."""

import sqlite3
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from posttrain.pipeline.driver import train
from posttrain.tasks.scene.source import SceneSource
from tests.dashboard.conftest import Server
from tests.tasks.scene.test_scene_source import write_config


@pytest.fixture(scope="module")
def scene_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("scene-run")
    train(write_config(base), base / "run")
    return base / "run"


def page(server, path: str) -> str:
    with urlopen(server.url + path, timeout=60) as response:
        assert response.headers["content-type"].startswith("text/html")
        return response.read().decode()


def test_a_stored_scene_sample_is_drawn_with_its_constraint_results(scene_run):
    db = sqlite3.connect(scene_run / "trajectories.sqlite")
    first, task_id = db.execute("SELECT id, task_id FROM trajectories ORDER BY id LIMIT 1").fetchone()
    second = db.execute("SELECT id FROM trajectories WHERE id > ? ORDER BY id LIMIT 1", (first,)).fetchone()[0]
    task = SceneSource("scene", [1, 2], seed=0, size=100_000).get(int(task_id.rsplit("/", 1)[1]))
    # the stored reply of one sample replaced by the oracle's answer to its task
    db.execute("UPDATE trajectories SET text = ? WHERE id = ?", (task.answer, second))
    db.commit()
    with Server([scene_run]) as server:
        untrained = page(server, f"/api/runs/0/samples/{first}/scene")
        assert "invalid answer:" in untrained and "window.sceneInfo" in untrained
        solved = page(server, f"/api/runs/0/samples/{second}/scene")
        assert "<div class='reward' id='reward'>1.000</div>" in solved
        assert solved.count("<li class='held'>") == len(task.metadata["scene"]["objects"]) + len(
            task.metadata["scene"]["relations"]
        )
        with pytest.raises(HTTPError) as missing:
            urlopen(server.url + "/api/runs/0/samples/999999/scene", timeout=30)
        assert missing.value.code == 404
