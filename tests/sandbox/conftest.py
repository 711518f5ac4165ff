import os
import shutil

import pytest

from posttrain.sandbox.interface import SandboxLimits, SandboxSpec

BWRAP_MISSING = (shutil.which("bwrap") is None or os.geteuid() != 0) and (
    "the bwrap backend needs bubblewrap (make setup installs it) and root"
)


@pytest.fixture
def sandbox_base(tmp_path, monkeypatch):
    base = tmp_path / "sandboxes"
    monkeypatch.setenv("POSTTRAIN_SANDBOX_DIR", str(base))
    return base


@pytest.fixture
def make_sandbox(sandbox_base):
    if BWRAP_MISSING:
        pytest.skip(BWRAP_MISSING)
    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    made = []

    def make(**limits):
        allow_network = limits.pop("allow_network", False)
        spec = SandboxSpec(limits=SandboxLimits(**limits), allow_network=allow_network)
        sandbox = BwrapSandbox(spec, base_dir=sandbox_base)
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()
