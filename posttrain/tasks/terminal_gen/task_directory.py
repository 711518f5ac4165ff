"""A `GeneratedTask` as a Harbor task directory, written atomically:

<name>/task.toml, instruction.md
<name>/environment/Dockerfile, environment/app/<files>   (COPY app/ <root>/, then the setup RUNs)
<name>/tests/test.sh, tests/test_outputs.py
<name>/solution/solve.sh, solution/steps.json
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from posttrain.tasks.terminal_gen.generated_task import GeneratedTask

# The verifier every generated task shares (the built-in suite's): the reward needs pytest's
# own report that every test ran and passed, not only its exit status, because the agent's
# code runs inside the test process and could end it early with status 0.
TEST_SH = """#!/bin/bash
# Verifier: runs the hidden checks and always writes a reward (1 pass, 0 fail).
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd __ROOT__ 2>/dev/null || cd /
report="$(mktemp -d)/junit.xml"
timeout 25 python3 -P -m pytest -q -p no:cacheprovider -rA --junitxml="$report" /tests/test_outputs.py
status=$?
if [ $status -eq 0 ] && python3 -P -c '
import sys, xml.etree.ElementTree as ET
suites = ET.parse(sys.argv[1]).getroot().iter("testsuite")
counts = [(int(s.get("tests", 0)), sum(int(s.get(k, 0)) for k in ("failures", "errors", "skipped"))) for s in suites]
sys.exit(0 if counts and all(n > 0 and bad == 0 for n, bad in counts) else 1)
' "$report" 2>/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
"""

TASK_TOML = """version = "1.0"

[metadata]
family = "{family}"
difficulty = {difficulty}
seed = {seed}
template = "{template}"
wording = "{wording}"
root = "{root}"
tags = ["generated", "{family}", "d{difficulty}"]

[verifier]
timeout_sec = 30.0

[agent]
timeout_sec = 120.0

[environment]
build_timeout_sec = 120.0
cpus = 1
memory_mb = 1024
storage_mb = 1024
allow_internet = false
"""


def dockerfile(task: GeneratedTask) -> str:
    lines = ["FROM debian:bookworm-slim", f"WORKDIR {task.root}"]
    if task.files:
        lines.append(f"COPY app/ {task.root}/")
    lines += [f"RUN {command}" for command in task.setup]
    return "\n".join(lines) + "\n"


def solve_sh(steps: list[str]) -> str:
    return "#!/bin/bash\nset -e\n" + "".join(step + "\n" for step in steps)


def task_files(task: GeneratedTask) -> dict[str, str]:
    """Relative path in the task directory -> content."""
    files = {
        "task.toml": TASK_TOML.format(
            family=task.family,
            difficulty=task.difficulty,
            seed=task.seed,
            template=task.template,
            wording=task.wording,
            root=task.root,
        ),
        "instruction.md": task.instruction.strip() + "\n",
        "environment/Dockerfile": dockerfile(task),
        "tests/test.sh": TEST_SH.replace("__ROOT__", task.root),
        "tests/test_outputs.py": task.tests,
        "solution/solve.sh": solve_sh(task.steps),
        "solution/steps.json": json.dumps(task.steps, indent=2) + "\n",
    }
    files.update({f"environment/app/{path}": content for path, content in task.files.items()})
    return files


def write_task(task: GeneratedTask, out_dir: Path, replace: bool = True) -> Path:
    """Writes out_dir/task.name and returns it. The directory is built beside its final place
    and renamed in, so a reader never sees half a task. An older copy is replaced, or with
    `replace=False` kept (a cache whose entries are named by their content)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / task.name
    staging = out_dir / f".{task.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        for relative, content in task_files(task).items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
            # fixed modes: the environment build copies them and hashes them into its cache key
            path.chmod(0o755 if relative.endswith(".sh") and not relative.startswith("environment/") else 0o644)
        if final.exists() and not replace:
            shutil.rmtree(staging)
        elif final.exists():
            retired = out_dir / f".{task.name}.{uuid.uuid4().hex[:8]}.old"
            os.rename(final, retired)
            os.rename(staging, final)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            try:
                os.rename(staging, final)
            except OSError:  # another writer renamed its copy in first
                if replace or not final.exists():
                    raise
                shutil.rmtree(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final
