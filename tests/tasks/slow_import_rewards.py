"""A reward module that takes longer to import than its reward's time limit."""

import time

time.sleep(2.0)


def exact(task, completion):
    return float(completion.strip() == "42")
