"""Screenshots of the scene page for docs/scene.md: the reference solver's layout of one task per
difficulty, rendered by `posttrain scene render` and shot in headless Chromium (WebGL through
SwiftShader).

    python scripts/scene_screenshots.py --out docs/img          # scene-d1.png, scene-d2.png, scene-d3.png
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"]


def posttrain(*args: str) -> str:
    command = [sys.executable, "-m", "posttrain.cli", *args]
    return subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for difficulty in (1, 2, 3):
            folder = Path(tmp) / f"d{difficulty}"
            posttrain(
                "scene", "generate", "-d", str(difficulty), "-n", "1", "--seed", str(args.seed), "--out", str(folder)
            )
            task = next(folder.glob("*.json"))
            answer = folder / "answer.json"
            answer.write_text(posttrain("scene", "solve", str(task)))
            page_path = folder / "scene.html"
            posttrain(
                "scene", "render", str(answer), "--task", str(task), "--out", str(page_path), "--title", task.stem
            )
            page = browser.new_page(viewport={"width": 1200, "height": 700})
            page.goto(page_path.as_uri())
            page.wait_for_function("window.sceneInfo && window.sceneInfo.frames >= 3", timeout=60_000)
            shot = args.out / f"scene-d{difficulty}.png"
            page.screenshot(path=str(shot))
            print(shot)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
