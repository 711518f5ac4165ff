"""A scene as one self-contained HTML page: Three.js (bundled from npm into static/, inlined, no
CDN) draws the answer with lights, a ground plane, the room's outline, the walkway and orbit
controls; beside it, the reward and each constraint with whether it held."""

from __future__ import annotations

import html
import json
from functools import cache
from importlib.resources import files

from posttrain.tasks.scene.catalogue import COLORS
from posttrain.tasks.scene.constraints import BESIDE_MAX_GAP, placed_id
from posttrain.tasks.scene.schema import Room, SceneAnswer, SceneTask
from posttrain.tasks.scene.scoring import SceneScore

_STYLE = """
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: #1d2430; display: flex; height: 100vh; }
#view { flex: 1; min-width: 0; position: relative; }
#side { width: 360px; overflow-y: auto; padding: 16px 18px; background: #f8f9fb; border-left: 1px solid #dde2ea; }
h1 { font-size: 17px; margin: 0 0 6px; } h2 { font-size: 14px; margin: 18px 0 6px; }
.reward { font-size: 28px; font-weight: 600; } .invalid { color: #b3261e; font-weight: 600; }
ul { list-style: none; padding: 0; margin: 0; } li { padding: 3px 0; border-bottom: 1px solid #eceff3; }
.held::before { content: "\\2713  "; color: #1e7b34; font-weight: 700; }
.failed::before { content: "\\2717  "; color: #b3261e; font-weight: 700; }
.why { color: #6b7480; font-size: 12px; margin-left: 18px; display: block; }
code { font-size: 12px; }
"""


@cache
def _static(name: str) -> str:
    return (files("posttrain.tasks.scene") / "static" / name).read_text(encoding="utf-8")


def render_page(
    answer: SceneAnswer, task: SceneTask | None = None, score: SceneScore | None = None, title: str = ""
) -> str:
    """The page for `answer`; with `task` and its `score`, the room is the task's and the
    constraint results are listed (failed objects glow red)."""
    room = task.room if task is not None else _room_around(answer)
    failed = [placed_id(c.name) for c in (score.constraints if score else []) if not c.held]
    data = {
        "room": room.model_dump(),
        "clear_path": task.clear_path.model_dump() if task is not None and task.clear_path else None,
        "objects": [o.model_dump() for o in answer.objects],
        "colors": COLORS,
        "failed_objects": [name for name in failed if name is not None],
    }
    payload = json.dumps(data).replace("</", "<\\/")
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title or 'scene')}</title><style>{_STYLE}</style></head>\n"
        f"<body><div id='view'></div><aside id='side'>{_sidebar(answer, task, score, title)}</aside>\n"
        f"<script type='application/json' id='scene-data'>{payload}</script>\n"
        f"<script>{_static('three-bundle.min.js')}</script>\n<script>{_static('viewer.js')}</script>\n"
        "</body></html>\n"
    )


def _sidebar(answer: SceneAnswer, task: SceneTask | None, score: SceneScore | None, title: str) -> str:
    parts = [f"<h1>{html.escape(title or 'scene')}</h1>", f"<div>{len(answer.objects)} objects</div>"]
    if task is not None:
        parts.append(f"<div>difficulty {task.difficulty} · room {_room_words(task.room)}</div>")
    if score is None:
        parts.append("<p>No task given: the geometry alone, no constraints checked.</p>")
        return "".join(parts)
    parts.append(f"<h2>Reward</h2><div class='reward' id='reward'>{score.reward:.3f}</div>")
    held = sum(c.held for c in score.constraints)
    parts.append(f"<div>{held} of {len(score.constraints)} constraints held</div>")
    if not score.valid:
        parts.append(f"<p class='invalid' id='invalid'>invalid answer: {html.escape(score.reason or '')}</p>")
    items = []
    for c in score.constraints:
        why = f"<span class='why'>{html.escape(c.why)}</span>" if c.why else ""
        items.append(f"<li class='{'held' if c.held else 'failed'}'><code>{html.escape(c.name)}</code>{why}</li>")
    parts.append(f"<h2>Constraints</h2><ul id='constraints'>{''.join(items)}</ul>")
    parts.append(f"<p class='why'>beside: at most {BESIDE_MAX_GAP} m apart; shapes are checked as their boxes.</p>")
    return "".join(parts)


def _room_words(room: Room) -> str:
    return f"{room.width:g} x {room.depth:g} m, {room.height:g} m high"


def _room_around(answer: SceneAnswer) -> Room:
    """Without a task: a floor that holds every object, with a metre to spare."""
    reach = max(
        (max(abs(o.position[0]), abs(o.position[2])) + max(o.width, o.depth) for o in answer.objects), default=1
    )
    height = max((o.top for o in answer.objects), default=1.0)
    return Room(width=2 * reach + 2, depth=2 * reach + 2, height=max(height + 0.5, 1.0))
