"""The agent's tools, each with a contract: a pydantic argument model (its JSON schema is what
the model is shown), a typed `ToolResult`, and explicit error codes.

    bash(command, timeout_s)           run a shell command in the task's workdir
    read_file(path, offset, limit)     a file's text, by line range
    write_file(path, content)          create or overwrite a file
    edit_file(path, old, new)          replace one exact occurrence of `old`
    list_dir(path)                     names in a directory, directories with a trailing /
    finish(summary)                    the agent is done
    rollback()                         restore the last good checkpoint (handled by the loop)

A tool never raises for a bad call: every failure is a ToolResult with an error code the model
can read and react to.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from posttrain.sandbox.interface import SandboxError

MAX_OBSERVATION_CHARS = 4000  # what the model sees of one tool's output


class ErrorCode(str, Enum):
    BAD_ARGUMENTS = "bad_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    MALFORMED_CALL = "malformed_call"
    NOT_FOUND = "not_found"
    NONZERO_EXIT = "nonzero_exit"
    TIMEOUT = "timeout"
    OUTPUT_TRUNCATED = "output_truncated"
    SANDBOX_ERROR = "sandbox_error"


# errors worth retrying as they are: the call was fine, the sandbox hiccupped
TRANSIENT = {ErrorCode.SANDBOX_ERROR}


@dataclass
class ToolResult:
    output: str
    error: ErrorCode | None = None
    exit_code: int | None = None
    truncated: bool = False
    duration_s: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None or self.error == ErrorCode.OUTPUT_TRUNCATED

    def observation(self) -> str:
        """What the model reads: the output, and the error code when there is one."""
        head = f"[error: {self.error.value}] " if self.error else ""
        exit_text = f"[exit code {self.exit_code}] " if self.exit_code not in (None, 0) else ""
        return (head + exit_text + self.output).strip() or "(no output)"


def clip(text: str, limit: int = MAX_OBSERVATION_CHARS) -> tuple[str, bool]:
    """Keep the head and the tail (errors are usually at the end)."""
    if len(text) <= limit:
        return text, False
    half = limit // 2
    return text[:half] + f"\n... [{len(text) - limit} characters cut] ...\n" + text[-half:], True


# ---- argument contracts ----------------------------------------------------------------------


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BashArgs(_Args):
    command: str = Field(min_length=1, description="a bash command line; runs in the task's working directory")
    timeout_s: float = Field(60.0, gt=0, le=600, description="seconds before the command is killed")


class ReadFileArgs(_Args):
    path: str = Field(min_length=1, description="absolute, or relative to the working directory")
    offset: int = Field(0, ge=0, description="first line to return (0-based)")
    limit: int = Field(200, ge=1, le=2000, description="lines to return")


class WriteFileArgs(_Args):
    path: str = Field(min_length=1)
    content: str


class EditFileArgs(_Args):
    path: str = Field(min_length=1)
    old: str = Field(min_length=1, description="text that occurs exactly once in the file")
    new: str


class ListDirArgs(_Args):
    path: str = Field(".", min_length=1)


class FinishArgs(_Args):
    summary: str = ""


class RollbackArgs(_Args):
    pass


@dataclass
class Tool:
    name: str
    description: str
    args: type[_Args]
    run: Callable[[Any, Any, str], ToolResult] | None  # (sandbox, args, workdir); None: the loop handles it

    def schema(self) -> dict:
        params = self.args.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        return {"name": self.name, "description": self.description, "parameters": params}


def _path(path: str, workdir: str) -> str:
    return path if path.startswith("/") else f"{workdir.rstrip('/')}/{path}"


def _run_bash(sandbox, args: BashArgs, workdir: str) -> ToolResult:
    result = sandbox.exec(args.command, timeout=args.timeout_s, workdir=workdir)
    if result.sandbox_killed:  # the infrastructure's, not the command's: a transient error, retried
        return ToolResult(
            f"the sandbox failed: its process running the command was killed from outside (exit {result.exit_code})",
            ErrorCode.SANDBOX_ERROR,
            duration_s=result.duration_s,
        )
    text = result.stdout + (("\n" if result.stdout and result.stderr else "") + result.stderr if result.stderr else "")
    text, clipped = clip(text)
    truncated = clipped or result.stdout_truncated or result.stderr_truncated
    error = None
    if result.timed_out:
        error = ErrorCode.TIMEOUT
        text = f"the command was killed after {args.timeout_s:g} s\n{text}"
    elif result.oom_killed:
        error = ErrorCode.NONZERO_EXIT
        text = f"the command ran out of memory and was killed\n{text}"
    elif result.exit_code != 0:
        error = ErrorCode.NONZERO_EXIT
    elif truncated:
        error = ErrorCode.OUTPUT_TRUNCATED
    return ToolResult(text, error, exit_code=result.exit_code, truncated=truncated, duration_s=result.duration_s)


def _exists_check(sandbox, path: str, kind: str, workdir: str) -> ToolResult | None:
    flag = "-d" if kind == "dir" else "-f"
    probe = sandbox.exec(f"test {flag} {shlex.quote(path)}", timeout=30, workdir=workdir)
    if probe.exit_code != 0:
        return ToolResult(f"no such {'directory' if kind == 'dir' else 'file'}: {path}", ErrorCode.NOT_FOUND)
    return None


def _run_read_file(sandbox, args: ReadFileArgs, workdir: str) -> ToolResult:
    path = _path(args.path, workdir)
    missing = _exists_check(sandbox, path, "file", workdir)
    if missing:
        return missing
    text = sandbox.read_file(path).decode("utf-8", errors="replace")
    lines = text.splitlines()
    chosen = lines[args.offset : args.offset + args.limit]
    body, clipped = clip("\n".join(chosen))
    more = args.offset + args.limit < len(lines)
    if more:
        body += f"\n[lines {args.offset}-{args.offset + len(chosen) - 1} of {len(lines)}; read on with offset]"
    truncated = clipped or more
    return ToolResult(body, ErrorCode.OUTPUT_TRUNCATED if clipped else None, truncated=truncated)


def _run_write_file(sandbox, args: WriteFileArgs, workdir: str) -> ToolResult:
    path = _path(args.path, workdir)
    parent = path.rsplit("/", 1)[0] or "/"
    sandbox.exec(["mkdir", "-p", parent], timeout=30)
    sandbox.write_file(path, args.content)
    return ToolResult(f"wrote {len(args.content.encode())} bytes to {path}")


def _run_edit_file(sandbox, args: EditFileArgs, workdir: str) -> ToolResult:
    path = _path(args.path, workdir)
    missing = _exists_check(sandbox, path, "file", workdir)
    if missing:
        return missing
    text = sandbox.read_file(path).decode("utf-8", errors="replace")
    count = text.count(args.old)
    if count == 0:
        return ToolResult(
            f"`old` does not occur in {path}; read the file and copy the text exactly", ErrorCode.NOT_FOUND
        )
    if count > 1:
        return ToolResult(
            f"`old` occurs {count} times in {path}; include more context so it is unique", ErrorCode.BAD_ARGUMENTS
        )
    sandbox.write_file(path, text.replace(args.old, args.new, 1))
    return ToolResult(f"edited {path}")


def _run_list_dir(sandbox, args: ListDirArgs, workdir: str) -> ToolResult:
    path = _path(args.path, workdir)
    missing = _exists_check(sandbox, path, "dir", workdir)
    if missing:
        return missing
    result = sandbox.exec(["ls", "-1Ap", "--", path], timeout=30)
    text, clipped = clip(result.stdout)
    return ToolResult(text or "(empty)", ErrorCode.OUTPUT_TRUNCATED if clipped else None, truncated=clipped)


def _run_finish(sandbox, args: FinishArgs, workdir: str) -> ToolResult:
    return ToolResult("done")


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in [
        Tool(
            "bash", "Run a bash command line in the sandbox and return its output and exit code.", BashArgs, _run_bash
        ),
        Tool("read_file", "Read lines of a text file.", ReadFileArgs, _run_read_file),
        Tool("write_file", "Create or overwrite a file with the given content.", WriteFileArgs, _run_write_file),
        Tool("edit_file", "Replace one exact occurrence of `old` with `new` in a file.", EditFileArgs, _run_edit_file),
        Tool("list_dir", "List a directory (directories end with /).", ListDirArgs, _run_list_dir),
        Tool("finish", "Call when the task is complete.", FinishArgs, _run_finish),
        Tool("rollback", "Undo your changes since the last good checkpoint.", RollbackArgs, None),
    ]
}


def tool_schemas(names: list[str] | None = None) -> list[dict]:
    return [TOOLS[n].schema() for n in (names or list(TOOLS))]


def validate_call(name: str, arguments: Any, offered: list[str] | None = None) -> tuple[Tool, _Args] | ToolResult:
    """The tool and its parsed arguments, or the error result the model should see.
    `offered`: the tools this agent was given (default all)."""
    names = offered or list(TOOLS)
    tool = TOOLS.get(name) if name in names else None
    if tool is None:
        return ToolResult(f"unknown tool {name!r}; the tools are: {', '.join(names)}", ErrorCode.UNKNOWN_TOOL)
    if not isinstance(arguments, dict):
        return ToolResult(
            f"{name}: arguments must be a JSON object, got {json.dumps(arguments)[:200]}", ErrorCode.BAD_ARGUMENTS
        )
    try:
        return tool, tool.args.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return ToolResult(f"{name}: {problems}", ErrorCode.BAD_ARGUMENTS)


def execute(tool: Tool, args: _Args, sandbox, workdir: str) -> ToolResult:
    """Run a validated call; sandbox failures become SANDBOX_ERROR results."""
    started = time.perf_counter()
    try:
        result = tool.run(sandbox, args, workdir)
    except SandboxError as exc:
        result = ToolResult(f"the sandbox failed: {exc}", ErrorCode.SANDBOX_ERROR)
    except OSError as exc:
        result = ToolResult(f"the sandbox failed: {exc}", ErrorCode.SANDBOX_ERROR)
    if not result.duration_s:
        result.duration_s = time.perf_counter() - started
    return result
