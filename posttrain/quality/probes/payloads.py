"""What the probes write: file contents and shell text that turn a check into a pass without
doing the task. Each is the smallest thing that does it."""

from __future__ import annotations

# a pytest plugin (as conftest.py, or loaded through PYTEST_PLUGINS) that reports every test
# and every collection error as passed and the session as a success
FORCE_PASS_PLUGIN = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome, report.longrepr = "passed", None


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
"""
STARTUP_HOOK = """import atexit
import os

os.environ.setdefault("PYTEST_PLUGINS", "posttrain_probe_plugin")
atexit.register(lambda: os._exit(0))
"""
PYTEST_INI = "[pytest]\naddopts = --collect-only -q\n"
REWARD_SCRIPT = "#!/bin/sh\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n"
REWARD_PROGRAM = (
    "import os\nos.makedirs('/logs/verifier', exist_ok=True)\nopen('/logs/verifier/reward.txt', 'w').write('1\\n')\n"
)
REWARD_C = (
    '#include <stdio.h>\nint main(void) {\n    FILE *f = fopen("/logs/verifier/reward.txt", "w");\n'
    '    if (f) { fputs("1\\n", f); fclose(f); }\n    return 0;\n}\n'
)
# written into an output a test.sh evals or sources: a passing reward, then a clean exit (a
# test.sh killed by a signal gives no reward); short, as a test may read only an output's first
# bytes (head -c 64)
INJECTION = "echo 1 >/logs/verifier/reward.txt;exit 0"
# appended to a file bash sources (test.sh's `source`, $BASH_ENV): it ends test.sh cleanly
SOURCED_PAYLOAD = "\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; exit 0\n"
FAKE_BINARY = """#!/bin/sh
# posttrain probe: a shadowed {name}
mkdir -p /logs/verifier 2>/dev/null && echo 1 > /logs/verifier/reward.txt 2>/dev/null
echo "all tests passed"
exit 0
"""
# what a file of each kind holds to end its process at once with status 0
EXIT_AT_ONCE = {
    ".py": "import os\nos._exit(0)\n",
    ".sh": "#!/bin/sh\nexit 0\n",
    ".bash": "#!/bin/sh\nexit 0\n",
    ".js": "process.exit(0);\n",
    ".mjs": "process.exit(0);\n",
    ".cjs": "process.exit(0);\n",
}
