"""The scene page in headless Chromium (WebGL through SwiftShader, the software renderer): it
renders without errors, the canvas is not blank, the Three.js scene holds one mesh per answer
object, and the constraint list matches the score; the glTF export loads back with the objects."""

import io
import json
from pathlib import Path

import pytest

from posttrain.tasks.scene import generate, score_reply, solve
from posttrain.tasks.scene.gltf import export_glb
from posttrain.tasks.scene.page import render_page

CHROMIUM_ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"]

READ_PIXELS = """() => {
  const canvas = document.querySelector('#view canvas');
  const gl = canvas.getContext('webgl2') || canvas.getContext('webgl');
  const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight, pixels = new Uint8Array(w * h * 4);
  gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
  const colours = new Set(); let background = 0, samples = 0;
  for (let i = 0; i < pixels.length; i += 4 * 53) {
    const rgb = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
    colours.add(rgb); samples += 1; if (rgb === 0xeef1f5) background += 1;
  }
  return {width: w, height: h, colours: colours.size, background: background / samples};
}"""


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed (make setup installs it as root)")
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1100, "height": 650})
    errors = []
    page.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_function("window.sceneInfo && window.sceneInfo.frames >= 3", timeout=60_000)
    return page, errors


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_the_page_draws_one_mesh_per_object_and_lists_the_constraints(browser, tmp_path, difficulty):
    task = generate(difficulty, 11)
    answer = solve(task)
    score = score_reply(answer.model_dump_json(), task)
    path = tmp_path / "scene.html"
    path.write_text(render_page(answer, task, score, f"difficulty {difficulty}"))
    page, errors = open_page(browser, path)
    info = page.evaluate("window.sceneInfo")
    assert info["meshes"] == info["objects"] == len(answer.objects)
    assert info["ids"] == [o.id for o in answer.objects]
    pixels = page.evaluate(READ_PIXELS)
    assert pixels["width"] > 100 and pixels["colours"] > 20 and pixels["background"] < 0.9, pixels
    assert page.locator("#constraints li").count() == len(score.constraints)
    assert page.locator("#constraints li.failed").count() == 0 and page.inner_text("#reward") == "1.000"
    assert "http" not in page.evaluate("[...document.scripts].map(s => s.src).join(' ')")  # nothing fetched
    page.screenshot(path=str(tmp_path / f"scene-d{difficulty}.png"))
    assert (tmp_path / f"scene-d{difficulty}.png").stat().st_size > 10_000
    assert errors == []
    page.close()


def test_a_partial_answer_shows_what_failed(browser, tmp_path):
    task = generate(2, 3)
    data = json.loads(solve(task).model_dump_json())
    data["objects"] = data["objects"][1:]  # the first object left out
    data["objects"][0]["position"][1] = 0.4  # and the next one floating
    reply = json.dumps(data)
    score = score_reply(reply, task)
    answer = score.answer
    path = tmp_path / "partial.html"
    path.write_text(render_page(answer, task, score))
    page, errors = open_page(browser, path)
    assert page.evaluate("window.sceneInfo.meshes") == len(answer.objects) == len(task.objects) - 1
    failed = page.locator("#constraints li.failed")
    assert failed.count() == sum(not c.held for c in score.constraints) >= 2
    assert "missing" in page.inner_text("#constraints") and "floats" in page.inner_text("#constraints")
    assert errors == []
    page.close()


def test_the_glb_export_loads_back_with_every_object_where_it_stands():
    trimesh = pytest.importorskip("trimesh")
    task = generate(3, 5)
    answer = solve(task)
    loaded = trimesh.load(io.BytesIO(export_glb(answer, task.room)), file_type="glb")
    assert set(loaded.geometry) == {o.id for o in answer.objects} | {"floor"}
    for obj in answer.objects:
        node = loaded.graph.geometry_nodes[obj.id][0]
        mesh = loaded.geometry[obj.id].copy().apply_transform(loaded.graph.get(node)[0])
        low, high = mesh.bounds
        assert low[1] == pytest.approx(obj.base, abs=1e-3) and high[1] == pytest.approx(obj.top, abs=1e-3)
        centre = (low + high) / 2
        assert centre[0] == pytest.approx(obj.position[0], abs=0.02)
        assert centre[2] == pytest.approx(obj.position[2], abs=0.02)
