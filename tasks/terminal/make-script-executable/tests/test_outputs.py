import os
import stat
import subprocess


def test_mode_exact():
    assert stat.S_IMODE(os.stat("/app/bin/deploy.sh").st_mode) == 0o755


def test_runs_unchanged():
    with open("/app/bin/deploy.sh") as fh:
        assert fh.read() == '#!/bin/bash\necho "deploying ${1:-staging}"\n'
    out = subprocess.run(["/app/bin/deploy.sh", "prod"], capture_output=True, text=True).stdout
    assert out == "deploying prod\n"
