from posttrain.agent.tool_calls import MalformedCall, ToolCall, format_call, parse_tool_calls


def only(text):
    calls = parse_tool_calls(text)
    assert len(calls) == 1, calls
    return calls[0]


def test_the_taught_format_round_trips():
    call = only("I will look.\n" + format_call("bash", {"command": "ls -la"}))
    assert isinstance(call, ToolCall) and call.name == "bash" and call.arguments == {"command": "ls -la"}


def test_several_calls_in_one_reply_keep_their_order():
    text = format_call("write_file", {"path": "a", "content": "x"}) + "\n" + format_call("bash", {"command": "cat a"})
    assert [c.name for c in parse_tool_calls(text)] == ["write_file", "bash"]


def test_tolerated_drift():
    # arguments as a JSON string, "tool"/"args" keys, single quotes, trailing comma, unclosed tag
    assert only('<tool_call>{"name": "bash", "arguments": "{\\"command\\": \\"pwd\\"}"}</tool_call>').arguments == {
        "command": "pwd"
    }
    assert only('<tool_call>{"tool": "list_dir", "args": {"path": "/app"}}</tool_call>').name == "list_dir"
    assert only("<tool_call>{'name': 'bash', 'arguments': {'command': 'ls',},}</tool_call>").arguments == {
        "command": "ls"
    }
    assert only('<tool_call>{"name": "bash", "arguments": {"command": "echo hi"').arguments == {"command": "echo hi"}
    assert only('```json\n{"name": "finish", "arguments": {}}\n```').name == "finish"
    assert only('{"function": {"name": "bash", "arguments": {"command": "id"}}}').name == "bash"
    assert only("Run this:\n```bash\nmake test\n```").arguments == {"command": "make test"}


def test_unreadable_calls_are_reported_not_raised():
    call = only("<tool_call>not json at all</tool_call>")
    assert isinstance(call, MalformedCall) and "JSON object" in call.reason
    assert isinstance(only('<tool_call>{"arguments": {}}</tool_call>'), MalformedCall)


def test_plain_text_has_no_calls():
    assert parse_tool_calls("The answer is 42. {not a call}") == []
