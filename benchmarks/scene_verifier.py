"""The scene verifier's cost: answers scored per second at each difficulty (the oracle's answers
and partial ones), and the time the validity gate takes to refuse crafted inputs. A reward that
costs microseconds never slows a rollout; one a crafted reply can stall would.

    python benchmarks/scene_verifier.py [--tasks 200] --out FILE.json

Prints JSON: {"difficulties": {d: {"answers_per_s", "mean_us", "objects", "constraints"}},
"crafted": {kind: {"reply_chars", "seconds", "reason"}}, "cpu"}. The goal: every crafted input
refused in under 0.1 s; scoring far below a rollout's own cost (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from posttrain.console import emit_benchmark
from posttrain.tasks.scene import generate, score_reply, solve

ONE = '{"id":"a%d","shape":"box","size":[1,1,1],"position":[0,0,0],"color":"red"}'
CRAFTED = {
    "a million objects": lambda: '{"objects":[' + ",".join([ONE % 0] * 1_000_000) + "]}",
    "10,000 nested groups": lambda: '{"objects":[' + '{"children":[' * 10_000 + "]}" * 10_000 + "]}",
    "400 objects in 32,000 characters": lambda: (
        '{"objects":[' + ",".join(ONE % i for i in range(1000))[:31_000].rsplit(",{", 1)[0] + "]}"
    ),
    "NaN and 1e308": lambda: (
        '{"objects":[{"id":"a","shape":"box","size":[NaN,1,1],' + '"position":[1e308,0,0],"color":"red"}]}'
    ),
}


def partial(task) -> str:
    answer = json.loads(solve(task).model_dump_json())
    answer["objects"] = answer["objects"][:-1]
    return json.dumps(answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200, help="tasks per difficulty")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    difficulties = {}
    for difficulty in (1, 2, 3, 6):
        tasks = [generate(difficulty, seed) for seed in range(args.tasks)]
        replies = [(solve(t).model_dump_json(), t) for t in tasks] + [(partial(t), t) for t in tasks]
        started = time.perf_counter()
        scores = [score_reply(reply, task) for reply, task in replies]
        elapsed = time.perf_counter() - started
        difficulties[difficulty] = {
            "answers_per_s": round(len(replies) / elapsed),
            "mean_us": round(1e6 * elapsed / len(replies)),
            "objects": sum(len(t.objects) for t in tasks) / len(tasks),
            "constraints": sum(len(s.constraints) for s in scores) / len(scores),
        }
    task = generate(3, 0)
    crafted = {}
    for kind, make in CRAFTED.items():
        reply = make()
        started = time.perf_counter()
        score = score_reply(reply, task)
        crafted[kind] = {
            "reply_chars": len(reply),
            "seconds": round(time.perf_counter() - started, 6),
            "valid": score.valid,
            "reason": score.reason,
        }
    emit_benchmark({"tasks_per_difficulty": args.tasks, "difficulties": difficulties, "crafted": crafted}, args.out)


if __name__ == "__main__":
    main()
