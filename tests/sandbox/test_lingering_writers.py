"""Nothing an agent starts outlives its command, in every backend that runs here: a writer that
double-forks, calls `setsid`, sits in `nohup` or is `disown`ed is gone when the command returns,
so it cannot write a reward after the verifier wiped /logs/verifier."""

import subprocess
import time
import uuid
import warnings

import pytest

from posttrain.sandbox.interface import SandboxLimits, SandboxSpec
from posttrain.sandbox.local_backend import LocalSandbox
from tests.sandbox.conftest import BWRAP_MISSING

# the loop every attack leaves behind: it writes a passing reward every 10 ms, forever
WRITER = 'R="${SANDBOX_ROOT:-}/logs/verifier"; while :; do mkdir -p "$R"; echo 1 > "$R/reward.txt"; sleep 0.01; done'

ATTACKS = {
    "double_fork_setsid": "( setsid bash -c 'exec -a {marker} bash -c \"$0\"' '{writer}' & ) ; echo left",
    "nohup": "nohup bash -c 'exec -a {marker} bash -c \"$0\"' '{writer}' >/dev/null 2>&1 & echo left",
    "disown": "bash -c 'exec -a {marker} bash -c \"$0\"' '{writer}' >/dev/null 2>&1 & disown; echo left",
    "setsid_fork": "setsid -f bash -c 'exec -a {marker} bash -c \"$0\"' '{writer}' >/dev/null 2>&1; echo left",
}


@pytest.fixture(params=["local", "bwrap"])
def sandbox(request, sandbox_base):
    if request.param == "bwrap":
        if BWRAP_MISSING:
            pytest.skip(BWRAP_MISSING)
        from posttrain.sandbox.bwrap_backend import BwrapSandbox

        made = BwrapSandbox(SandboxSpec(limits=SandboxLimits(disk_mb=16)), base_dir=sandbox_base)
    else:
        with warnings.catch_warnings():  # that it isolates nothing is not the point here
            warnings.simplefilter("ignore", RuntimeWarning)
            made = LocalSandbox(SandboxSpec(limits=SandboxLimits(disk_mb=16)))
    yield made
    made.close()


def host_processes_named(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def reward_file(sandbox) -> bytes | None:
    try:
        return sandbox.read_file("/logs/verifier/reward.txt")
    except FileNotFoundError:
        return None


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_writer_left_behind_is_gone_when_its_command_returns(sandbox, attack):
    marker = f"writer-{uuid.uuid4().hex[:8]}"
    result = sandbox.exec(["bash", "-c", ATTACKS[attack].format(marker=marker, writer=WRITER)], timeout=30)
    assert result.exit_code == 0 and "left" in result.stdout
    assert host_processes_named(marker) == []
    sandbox.exec(["bash", "-c", 'rm -rf "${SANDBOX_ROOT:-}/logs/verifier"'])  # the verifier's wipe
    time.sleep(0.3)  # thirty of the writer's rounds, were it alive
    assert reward_file(sandbox) is None


def test_a_writer_left_by_a_command_that_timed_out_is_gone_too(sandbox):
    marker = f"writer-{uuid.uuid4().hex[:8]}"
    attack = ATTACKS["double_fork_setsid"].format(marker=marker, writer=WRITER) + "; sleep 60"
    result = sandbox.exec(["bash", "-c", attack], timeout=1)
    assert result.timed_out and result.exit_code == 124
    assert host_processes_named(marker) == []
