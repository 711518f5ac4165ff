import pytest

from posttrain.agent.tools import TOOLS, ErrorCode, execute, tool_schemas, validate_call
from tests.sandbox.conftest import BWRAP_MISSING

pytestmark = pytest.mark.skipif(bool(BWRAP_MISSING), reason=str(BWRAP_MISSING))


@pytest.fixture
def sandbox():
    from posttrain.sandbox.bwrap_backend import BwrapSandbox
    from posttrain.sandbox.interface import SandboxLimits, SandboxSpec

    box = BwrapSandbox(SandboxSpec(limits=SandboxLimits(timeout_s=30)))
    yield box
    box.close()


def call(sandbox, name, **arguments):
    checked = validate_call(name, arguments)
    if not isinstance(checked, tuple):
        return checked
    return execute(*checked, sandbox, "/app")


def test_every_tool_has_a_schema_for_its_arguments():
    schemas = {s["name"]: s for s in tool_schemas()}
    assert set(schemas) == set(TOOLS)
    assert schemas["bash"]["parameters"]["required"] == ["command"]
    assert schemas["edit_file"]["parameters"]["properties"]["old"]["type"] == "string"


def test_bash_results_and_error_codes(sandbox):
    ok = call(sandbox, "bash", command="echo hi")
    assert ok.ok and ok.error is None and ok.output.strip() == "hi" and ok.exit_code == 0
    failed = call(sandbox, "bash", command="echo oops >&2; exit 3")
    assert failed.error == ErrorCode.NONZERO_EXIT and failed.exit_code == 3 and "oops" in failed.output
    assert "[exit code 3]" in failed.observation()
    slow = call(sandbox, "bash", command="sleep 30", timeout_s=1)
    assert slow.error == ErrorCode.TIMEOUT
    long = call(sandbox, "bash", command="seq 1 100000")
    assert long.error == ErrorCode.OUTPUT_TRUNCATED and long.ok and "characters cut" in long.output
    assert long.output.rstrip().endswith("100000")  # the tail is kept: errors are usually there


def test_file_tools(sandbox):
    assert call(sandbox, "write_file", path="notes/a.txt", content="one\ntwo\ntwo\n").ok
    assert call(sandbox, "read_file", path="/app/notes/a.txt").output == "one\ntwo\ntwo"
    assert call(sandbox, "read_file", path="notes/a.txt", offset=1, limit=1).output.startswith("two\n[lines 1-1 of 3")
    assert call(sandbox, "edit_file", path="notes/a.txt", old="two", new="2").error == ErrorCode.BAD_ARGUMENTS  # twice
    assert call(sandbox, "edit_file", path="notes/a.txt", old="one", new="1").ok
    assert call(sandbox, "edit_file", path="notes/a.txt", old="zzz", new="1").error == ErrorCode.NOT_FOUND
    assert sandbox.read_file("/app/notes/a.txt") == b"1\ntwo\ntwo\n"
    assert call(sandbox, "read_file", path="missing.txt").error == ErrorCode.NOT_FOUND
    assert call(sandbox, "list_dir", path=".").output.split() == ["notes/"]
    assert call(sandbox, "list_dir", path="/nowhere").error == ErrorCode.NOT_FOUND


def test_bad_calls_become_results(sandbox):
    assert call(sandbox, "bash").error == ErrorCode.BAD_ARGUMENTS  # missing command
    assert "command" in call(sandbox, "bash").output
    assert call(sandbox, "bash", command="ls", colour="red").error == ErrorCode.BAD_ARGUMENTS
    assert call(sandbox, "teleport", to="mars").error == ErrorCode.UNKNOWN_TOOL
    assert validate_call("bash", ["ls"]).error == ErrorCode.BAD_ARGUMENTS


def test_a_closed_sandbox_is_a_sandbox_error_not_an_exception(sandbox):
    sandbox.close()
    assert call(sandbox, "bash", command="true").error == ErrorCode.SANDBOX_ERROR


def test_the_config_knows_every_tool_and_a_tool_not_offered_is_unknown():
    from posttrain.config import AGENT_TOOLS

    assert set(AGENT_TOOLS) == set(TOOLS)
    result = validate_call("read_file", {"path": "x"}, offered=["bash", "finish"])
    assert result.error == ErrorCode.UNKNOWN_TOOL and "the tools are: bash, finish" in result.output
    assert validate_call("bash", {"command": "ls"}, offered=["bash", "finish"])[0].name == "bash"
