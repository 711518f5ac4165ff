"""`posttrain scene generate|solve|check|render`, run through the real CLI."""

import json

import fsspec
from typer.testing import CliRunner

from posttrain.cli import app


def run(*args) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def test_generate_solve_check_and_render(tmp_path):
    code, out = run("scene", "generate", "--difficulty", "1,3", "--count", "3", "--seed", "2", "--out", tmp_path / "t")
    assert code == 0, out
    names = sorted(p.name for p in (tmp_path / "t").iterdir())
    assert names == [
        "scene-d1-0000.json",
        "scene-d1-0000.txt",
        "scene-d1-0002.json",
        "scene-d1-0002.txt",
        "scene-d3-0001.json",
        "scene-d3-0001.txt",
    ]
    task = tmp_path / "t" / "scene-d3-0001.json"
    assert "Answer with JSON only" in (tmp_path / "t" / "scene-d3-0001.txt").read_text()

    code, out = run("scene", "solve", task)
    assert code == 0, out
    answer = tmp_path / "answer.json"
    answer.write_text(out)

    code, out = run("scene", "check", task, answer)
    report = json.loads(out)
    assert code == 0 and report["reward"] == 1.0 and report["valid"] and report["passed"]
    assert report["total"] == len(report["constraints"]) > 10 and all(c["held"] for c in report["constraints"])

    reply = tmp_path / "reply.txt"
    reply.write_text('Here it is: {"objects": [{"id": "table_1", "size": [1, 1, 1]}]}')
    code, out = run("scene", "check", task, reply)
    report = json.loads(out)
    assert code == 0 and report["reward"] == 0.0 and not report["valid"]
    assert report["reason"].startswith("objects.0.shape: Field required")

    code, out = run("scene", "render", answer, "--task", task, "--output", "memory://scenes/page.html")
    assert code == 0, out
    assert json.loads(out)["glb"] == "memory://scenes/page.glb"
    with fsspec.open("memory://scenes/page.html", "rb") as handle:
        page = handle.read().decode()
    assert "window.sceneInfo" in page and "OrbitControls" in page and "placed(" in page
    with fsspec.open("memory://scenes/page.glb", "rb") as handle:
        assert handle.read(4) == b"glTF"


def test_bad_files_are_one_clear_error(tmp_path):
    bad = tmp_path / "task.json"
    bad.write_text('{"difficulty": 1, "seed": 0, "room": {"width": -1, "depth": 3, "height": 3}, "objects": []}')
    code, out = run("scene", "solve", bad)
    assert code == 2 and f"{bad}: not a scene task: room.width: Input should be greater than 0" in out
    code, out = run("scene", "check", tmp_path / "absent.json", bad)
    assert code == 2 and "absent.json: cannot read the artifact" in out
    code, out = run("scene", "render", bad, "--output", tmp_path / "x.html")
    assert code == 2 and "task.json: not a valid scene answer: difficulty: Extra inputs are not permitted" in out
    assert not (tmp_path / "x.html").exists()
    code, out = run("scene", "generate", "--difficulty", "7", "--out", tmp_path / "t")
    assert code == 2 and "difficulty must be an integer from 1 to 6" in out


def test_help_explains_each_command():
    for command in ("generate", "solve", "check", "render"):
        code, out = run("scene", command, "--help")
        assert code == 0 and "Example: posttrain scene" in out


def test_render_takes_output_file_and_the_old_out_with_a_warning(tmp_path):
    answer = tmp_path / "answer.json"
    code, out = run("scene", "generate", "--count", "1", "--out", tmp_path / "t")
    assert code == 0, out
    task = next((tmp_path / "t").glob("*.json"))
    code, out = run("scene", "solve", task)
    answer.write_text(out)
    code, out = run("scene", "render", answer, "--out", tmp_path / "old.html")
    assert code == 0 and (tmp_path / "old.html").is_file() and (tmp_path / "old.glb").is_file()
    assert out.splitlines()[0] == "warning: --out is deprecated here; write --output"
    code, out = run("scene", "render", answer)
    assert code == 2 and "error: --output FILE is required" in out
    code, out = run("scene", "render", "--help")
    assert "--output FILE" in out and "--out " not in out.replace("--output", "")
