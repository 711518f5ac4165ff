"""Screenshots of each dashboard page for docs/dashboard.md, over a run, an eval and an inspection.

    python scripts/dashboard_screenshots.py RUN_DIR EVAL_DIR INSPECT_DIR --out docs/img

Serves the dashboard in this process, opens each page in headless Chromium (Debian's
/usr/bin/chromium through Playwright) and writes dashboard-<page>.png.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def served_dashboard(paths: list[Path]):
    spec = importlib.util.spec_from_file_location("dashboard_load", ROOT / "benchmarks" / "dashboard_load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ServedDashboard(paths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("eval", type=Path)
    parser.add_argument("inspect", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with served_dashboard([args.run, args.eval, args.inspect]) as served, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})

        def shoot(path: str, name: str, full_page: bool = False) -> None:
            page.goto(served.url + path)
            page.wait_for_selector("body[data-ready='1']")
            page.screenshot(path=str(args.out / f"dashboard-{name}.png"), full_page=full_page)

        shoot("/", "runs")
        shoot("/run/0", "curves")
        last_step = page.locator("#last-step").inner_text()
        shoot(f"/run/0/samples?step={last_step}", "samples")
        ids = [row.get_attribute("data-id") for row in page.locator("#samples tr.sample-row").all()]
        # a sample the trainer trained on (dynamic sampling drops groups whose rewards are equal)
        trained = [
            i for i in ids if "entropy" in page.request.get(f"{served.url}/api/runs/0/samples/{i}").json()["tokens"]
        ]
        page.goto(f"{served.url}/run/0/sample/{(trained or ids)[0]}")
        page.wait_for_selector(".tokens .tok")
        page.locator(".tokens .tok").nth(1).hover()
        page.screenshot(path=str(args.out / "dashboard-sample.png"))
        if page.locator("select.colour-by option[value='entropy']").count():  # the run stored the trainer's side
            page.locator("select.colour-by").first.select_option("entropy")
            page.locator(".tokens .tok").nth(1).hover()
            page.screenshot(path=str(args.out / "dashboard-sample-entropy.png"))
        shoot("/eval/1", "eval")
        page.locator("#attempts a").first.click()
        page.wait_for_selector(".toolcall")
        page.screenshot(path=str(args.out / "dashboard-episode.png"))
        shoot("/inspect/2", "inspect")
        browser.close()


if __name__ == "__main__":
    main()
