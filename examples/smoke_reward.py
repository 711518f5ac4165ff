"""The smoke run's toy reward: the share of the reply that is letters. A randomly initialised
model cannot answer arithmetic (its rewards would all be 0 and no step would update it), but
its samples of a prompt differ in this, so the smoke run's two steps have something to learn."""


def letters(task: dict, completion: str) -> float:
    return sum(c.isalpha() for c in completion) / max(len(completion), 1)
