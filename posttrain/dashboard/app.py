"""The dashboard's web app: JSON endpoints over the directories, and one page that draws them.

Every page URL (/, /run/0, /run/0/samples, /run/0/sample/7, /eval/1, /inspect/2) serves the
same index.html; static/app.js reads the URL, asks the endpoints under /api and draws. A
problem with one directory (a corrupt line, a missing file) is reported in its response and
on its page; the other directories keep being served."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from posttrain.dashboard import curves
from posttrain.dashboard.directories import EVAL, INSPECT, RUN, Directory, open_directories
from posttrain.dashboard.domain_table import domain_rows
from posttrain.dashboard.eval_results import result_rows, trajectory_file
from posttrain.dashboard.metrics_log import MetricsLog
from posttrain.dashboard.overviews import overview, read_json, status
from posttrain.dashboard.sample_view import episode_view, sample_view
from posttrain.dashboard.token_text import TokenTexts, run_model_name
from posttrain.dashboard.trajectory_queries import SampleFilter, TrajectoryQueries
from posttrain.errors import PosttrainError

STATIC = Path(__file__).parent / "static"
PAGES = (
    "/",
    "/compare",
    "/run/{index}",
    "/run/{index}/samples",
    "/run/{index}/sample/{sample_id}",
    "/eval/{index}",
    "/eval/{index}/episode",
    "/inspect/{index}",
)


class Dashboard:
    """The directories and what is kept between requests: each run's metrics read so far."""

    def __init__(self, directories: list[Directory], not_shown: list[str] | None = None) -> None:
        self.directories = directories
        self.not_shown = not_shown or []  # paths given that are not dashboard directories, with why
        self.metrics = {d.index: MetricsLog(d.path / "metrics.jsonl") for d in directories if d.kind == RUN}
        self.trajectories = {d.index: TrajectoryQueries(d.path / "trajectories.sqlite") for d in directories}
        self._texts: dict[int, TokenTexts] = {}

    def get(self, index: int, kind: str | None = None) -> Directory:
        if not 0 <= index < len(self.directories):
            raise HTTPException(404, f"no directory {index}: the dashboard shows {len(self.directories)}")
        directory = self.directories[index]
        if kind is not None and directory.kind != kind:
            raise HTTPException(404, f"{directory.path} is {_a(directory.kind)} directory, not {_a(kind)} directory")
        return directory

    def texts(self, directory: Directory) -> TokenTexts:
        if directory.index not in self._texts:
            model = run_model_name(directory.path / "config.toml") or (
                (read_json(directory.path / "eval.json")[0] or {}).get("model")
            )
            self._texts[directory.index] = TokenTexts(model)
        return self._texts[directory.index]

    def last_step(self, directory: Directory) -> int | None:
        if directory.kind != RUN:
            return None
        records = self.metrics[directory.index].refresh()
        return int(max(r["step"] for r in records)) if records else None


def create_app(paths: list[Path]) -> FastAPI:
    """Paths that are not dashboard directories are named on the runs page (GET /api/not-shown);
    raises NotADashboardDirectory (one line per path) when none is, before anything is served."""
    dashboard = Dashboard(*open_directories(paths))
    app = FastAPI(title="posttrain dashboard", docs_url=None, redoc_url=None)
    app.state.dashboard = dashboard
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(sqlite3.DatabaseError)
    def damaged_store(request: Request, exc: sqlite3.DatabaseError) -> JSONResponse:
        """A trajectories.sqlite that SQLite cannot read: said on the page that asked for it."""
        index = request.path_params.get("index")
        where = dashboard.directories[int(index)].path / "trajectories.sqlite" if index is not None else "a store"
        return JSONResponse({"detail": f"{where}: cannot be read ({exc})"}, status_code=422)

    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    for route in PAGES:
        app.add_api_route(route, page, include_in_schema=False)

    @app.get("/metrics", include_in_schema=False)
    def prometheus_metrics() -> Response:
        """Every run's latest step for a Prometheus scraper (posttrain/observe/prometheus_exposition.py)."""
        from prometheus_client.exposition import CONTENT_TYPE_LATEST

        from posttrain.observe.prometheus_exposition import exposition

        def latest():
            for d in dashboard.directories:
                if d.kind == RUN:
                    records = dashboard.metrics[d.index].refresh()
                    yield d.name, status(d.path, d.kind) == "live", records[-1] if records else None

        return Response(exposition(latest), media_type=CONTENT_TYPE_LATEST)

    @app.get("/api/directories")
    def directories() -> list[dict[str, Any]]:
        return [_listed(overview(d, dashboard.last_step(d))) for d in dashboard.directories]

    @app.get("/api/not-shown")
    def not_shown() -> list[str]:
        return dashboard.not_shown

    @app.get("/api/directories/{index}")
    def directory(index: int) -> dict[str, Any]:
        found = dashboard.get(index)
        return overview(found, dashboard.last_step(found))

    @app.get("/api/runs/{index}/metrics")
    def metrics(index: int, after: float | None = None) -> dict[str, Any]:
        """The run's curves: every numeric key by step (only steps after `after` when given,
        for a page that polls), the panels they go on, alarms, and problems found."""
        found = dashboard.get(index, RUN)
        log = dashboard.metrics[index]
        records = log.refresh()
        keys = curves.numeric_keys(records)
        shown = [r for r in records if after is None or r["step"] > after]
        return {
            "keys": keys,
            "panels": curves.panels(keys),
            "unpanelled": curves.unpanelled(keys),
            **curves.series(shown, keys),
            "alarms": curves.alarms(shown),
            "problems": list(log.problems),
            "status": status(found.path, found.kind),
        }

    @app.get("/api/runs/{index}/domains")
    def domains(index: int) -> dict[str, Any]:
        """One row per domain for the run page's sortable table (domain_table.py)."""
        found = dashboard.get(index, RUN)
        rows = domain_rows(found.path, dashboard.metrics[index].refresh())
        return {"rows": rows, "many": len(rows) > curves.MANY_DOMAINS}

    @app.get("/api/runs/{index}/steps")
    def steps(index: int) -> list[dict[str, int]]:
        dashboard.get(index, RUN)
        return dashboard.trajectories[index].steps()

    @app.get("/api/runs/{index}/samples")
    def samples(
        index: int,
        step: int | None = None,
        domain: str | None = None,
        task: str | None = None,
        min_reward: float | None = None,
        max_reward: float | None = None,
        passed: bool | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        after: int = 0,
        size: int = Query(50, ge=1, le=200),
    ) -> dict[str, Any]:
        dashboard.get(index, RUN)
        sample_filter = SampleFilter(step, domain, task, min_reward, max_reward, passed, min_length, max_length)
        return dashboard.trajectories[index].page(sample_filter, after=after, size=size)

    @app.get("/api/runs/{index}/samples/{sample_id}")
    def sample(index: int, sample_id: int) -> dict[str, Any]:
        found = dashboard.get(index, RUN)
        row = dashboard.trajectories[index].sample(sample_id)
        if row is None:
            raise HTTPException(404, f"{found.path}/trajectories.sqlite has no sample {sample_id}")
        return sample_view(row, dashboard.texts(found))

    @app.get("/api/runs/{index}/samples/{sample_id}/scene", response_class=HTMLResponse)
    def sample_scene(index: int, sample_id: int) -> HTMLResponse:
        """A scene-domain sample drawn in 3D (posttrain/dashboard/scene_view.py)."""
        from posttrain.dashboard.scene_view import scene_page_of_sample

        found = dashboard.get(index, RUN)
        row = dashboard.trajectories[index].sample(sample_id)
        if row is None:
            raise HTTPException(404, f"{found.path}/trajectories.sqlite has no sample {sample_id}")
        try:
            return HTMLResponse(scene_page_of_sample(found.path, row))
        except PosttrainError as exc:
            raise HTTPException(422, str(exc)) from None

    @app.get("/api/evals/{index}/results")
    def eval_results(index: int) -> dict[str, Any]:
        found = dashboard.get(index, EVAL)
        rows, problems = result_rows(found.path)
        summary, problem = read_json(found.path / "summary.json")
        tasks = summary.get("tasks", {}) if isinstance(summary, dict) else {}
        return {"rows": rows, "tasks": tasks, "problems": problems + ([problem] if problem else [])}

    @app.get("/api/evals/{index}/episode")
    def eval_episode(index: int, path: str) -> dict[str, Any]:
        found = dashboard.get(index, EVAL)
        target = trajectory_file(found.path, path)
        if target is None:
            raise HTTPException(404, f"{found.path}: no trajectory {path}")
        try:
            trajectory = json.loads(target.read_text())
        except json.JSONDecodeError as exc:
            raise HTTPException(422, f"{target}: not JSON ({exc.msg})") from None
        return episode_view(trajectory, dashboard.texts(found))

    @app.get("/api/inspections/{index}/tasks")
    def inspection_tasks(index: int) -> dict[str, Any]:
        found = dashboard.get(index, INSPECT)
        report, problem = read_json(found.path / "report.json")
        tasks = report.get("tasks", []) if isinstance(report, dict) else []
        return {"tasks": tasks, "problems": [problem] if problem else []}

    return app


def _listed(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "config"}


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
