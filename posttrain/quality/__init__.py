"""The environment quality gate: every task is checked before it can reach training.

inspector.py     runs every check on every task, in parallel sandboxes -> report + quarantine
execution.py     the reference solution passes, doing nothing fails, the verifier is
                 deterministic, the solution fits the limits, the environment is healthy
probes/          scripted adversarial agents, each trying one known reward hack
lint.py          static checks of the task's files
signal_check.py  the policy's pass rate is strictly between 0 and 1
verdicts.py      checks -> one verdict per task
quarantine.py    the quarantine list training and evaluation read
suite_inspection.py  `posttrain inspect` as one call: the directories chosen, a progress bar, --out
"""
