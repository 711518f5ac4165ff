"""Reward functions as a user writes them, for the custom-reward tests (imported by path from
the test's config folder, as `python:user_rewards:<function>`)."""

import os
import time


def length_reward(task, completion):
    return {"reward": min(len(completion) / 40, 1.0), "chars": float(len(completion))}


def misbehaving(task, completion):
    """Each row's `kind` says how this function fails on it."""
    kind = task["metadata"].get("extra_info", {}).get("kind", task["answer"])
    if kind == "raise":
        raise ValueError("cannot parse the completion")
    if kind == "hang":
        time.sleep(600)
    if kind == "range":
        return 2.5
    if kind == "text":
        return "yes"
    if kind == "no-reward":
        return {"score": 1.0}
    if kind == "exit":
        os._exit(3)
    if kind == "print":
        print("a stray print must not break the worker's replies")
        return 0.75
    return 1.0 if completion.strip() else 0.0
