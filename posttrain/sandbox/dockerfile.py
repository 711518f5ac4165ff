"""Reading a Dockerfile for the bwrap builder, which has no container engine.

`parse_dockerfile` reads a Dockerfile into the few instructions that change a sandbox's files
or environment (WORKDIR, COPY/ADD, RUN), with variables already resolved, plus the final ENV
and WORKDIR. Whether the host can stand in for its base image is `base_image.stand_in`'s call.
Each instruction has a function of its own below, which reads it and updates the parse.

`read_dockerfile` is the same parser for readers that build nothing (the quality checks): what
the bwrap builder could not follow is a note there, not an error, and every stage is read.

What is supported, and how (the rest is a `DockerfileError` naming `path:line`):

    FROM image [AS name]      one stage; a second FROM is an error (multi-stage build)
    ARG name[=default]        defaults, build-arg overrides, `${VAR}` substitution; the values
                              are in the environment of later RUN steps (not of the sandbox)
    ENV k=v ... / ENV k v     accumulates into the sandbox environment
    WORKDIR path              created; relative paths are relative to the previous WORKDIR
    COPY/ADD src... dest      shell and JSON forms, globs, several sources, heredocs;
                              --chmod honoured (octal), --chown ignored with a note (all is
                              root); ADD of a local tar archive extracts it; ADD of a URL is an
                              error (the build has no business downloading outside a RUN step)
    RUN cmd / RUN ["a", "b"]  shell form (with heredocs) and exec form; --network honoured,
                              --mount rejected
    SHELL ["sh", "-c"]        the shell of later shell-form RUN steps
    CMD ENTRYPOINT EXPOSE LABEL USER VOLUME HEALTHCHECK STOPSIGNAL ONBUILD MAINTAINER
                              ignored, each with a recorded note

Variable substitution follows Docker: `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR:+alt}` (and
the forms without the colon) in FROM, ENV, WORKDIR, COPY/ADD, and not in RUN, where the shell
expands them from the environment.
"""

from __future__ import annotations

import json
import platform
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from posttrain.sandbox.base_image import HostInfo, StandIn, stand_in
from posttrain.sandbox.interface import DEFAULT_PATH, SandboxError
from posttrain.sandbox.overlay import OVERLAY_DIRS, SYSTEM_DIRS

# the sandbox workspace directories, and the system directories a build writes through overlays
WRITABLE_ROOTS = (*OVERLAY_DIRS, *SYSTEM_DIRS)
WRITABLE_TEXT = (
    "only /app, /tmp, /tests, /logs, /root, /solution and (over the host's) /usr, /etc, /var, /opt "
    "are writable in a bwrap sandbox"
)
DEFAULT_SHELL = ("/bin/sh", "-c")  # Docker's default SHELL

_IGNORED = {
    "CMD": "the harness runs its own commands",
    "ENTRYPOINT": "the harness runs its own commands",
    "EXPOSE": "sandboxes publish no ports",
    "LABEL": "labels are metadata only",
    "USER": "every sandbox command runs as root (in a user namespace)",
    "VOLUME": "the sandbox workspace is already writable",
    "HEALTHCHECK": "sandboxes have no health checks",
    "STOPSIGNAL": "sandbox commands are killed as a process tree",
    "ONBUILD": "there are no child builds",
    "MAINTAINER": "metadata only",
}
_HEREDOC = re.compile(r"(?:^|(?<=\s))<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2(?=\s|$)")
_FLAG = re.compile(r"\s*--([A-Za-z][\w-]*)(?:=(\S*))?(?=\s|$)")
_URL = re.compile(r"^(?:https?|ftp|git)://|^git@", re.IGNORECASE)


class DockerfileError(SandboxError):
    """A Dockerfile the bwrap builder cannot follow; the message starts with `path:line:`."""

    def __init__(self, path: Path | str, line: int | None, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}" if line else f"{self.path}: {reason}")


# ---- parsed instructions ----------------------------------------------------------------


@dataclass
class CopySource:
    """One source of a COPY/ADD: a path (or glob) in the build context, or a heredoc."""

    path: str  # as written, variables substituted; "" for a heredoc
    heredoc_name: str = ""  # the heredoc's delimiter word: the file name when dest is a dir
    content: bytes | None = None  # a heredoc's body


@dataclass
class Instruction:
    """An instruction that changes the sandbox's files: WORKDIR, COPY, ADD or RUN."""

    keyword: str
    line: int
    text: str  # as written (continuations joined, heredoc bodies appended)
    workdir: str  # the WORKDIR in effect (for WORKDIR: the new one)
    env: dict[str, str] = field(default_factory=dict)  # RUN: ENV and ARG values in effect
    # COPY / ADD
    sources: list[CopySource] = field(default_factory=list)
    dest: str = ""  # absolute, normalised
    dest_is_dir: bool = False  # written with a trailing "/" (or ".")
    chmod: int | None = None
    # RUN
    command: str | list[str] = ""  # str: run with `shell`; list: exec form
    shell: tuple[str, ...] = DEFAULT_SHELL
    stdin: str | None = None  # a `RUN <<EOF` script with a #! line is fed on stdin
    network: bool = True


@dataclass
class Dockerfile:
    path: Path
    base: StandIn
    stage: str | None  # the `AS name` of the single stage
    instructions: list[Instruction]  # WORKDIR, COPY, ADD, RUN in order
    env: dict[str, str]  # the final ENV
    workdir: str  # the final WORKDIR ("/" when none)
    args: dict[str, str]  # the final ARG values
    notes: list[str]
    images: list[str] = field(default_factory=list)  # each FROM's image, in order (an earlier stage's name is none)


# ---- lexing -----------------------------------------------------------------------------


@dataclass
class _Logical:
    line: int
    keyword: str
    args: str
    heredocs: list[tuple[str, str, bool]]  # (word, body, quoted)


def _split_logical(text: str, path: Path) -> tuple[list[_Logical], str]:
    """The instructions of a Dockerfile, one per logical line, and its escape character."""
    lines = text.lstrip("\ufeff").splitlines()
    escape = "\\"
    i = 0
    # parser directives: `# escape=`` ` etc., only at the very top
    while i < len(lines):
        directive = re.match(r"#\s*([A-Za-z]+)\s*=\s*(\S+)\s*$", lines[i])
        if not directive:
            break
        if directive.group(1).lower() == "escape":
            if directive.group(2) not in ("\\", "`"):
                raise DockerfileError(path, i + 1, f"escape directive must be \\ or `, not {directive.group(2)}")
            escape = directive.group(2)
        i += 1
    continuation = re.compile(re.escape(escape) + r"[ \t]*$")
    result: list[_Logical] = []
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i + 1
        parts: list[str] = []
        while i < len(lines):
            line = lines[i]
            i += 1
            match = continuation.search(line)
            if not match:
                parts.append(line)
                break
            parts.append(line[: match.start()])
            while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                i += 1  # comment and blank lines inside a continuation are dropped, as Docker does
        logical = "".join(parts).strip()
        head = re.match(r"(\S+)\s*(.*)", logical, re.DOTALL)
        keyword, args = (head.group(1).upper(), head.group(2).strip()) if head else ("", "")
        heredocs: list[tuple[str, str, bool]] = []
        if keyword in ("RUN", "COPY", "ADD"):
            for match in _HEREDOC.finditer(args):
                strip_tabs, quote, word = match.group(1) == "-", match.group(2), match.group(3)
                body: list[str] = []
                while True:
                    if i >= len(lines):
                        raise DockerfileError(path, start, f"heredoc <<{word} is not closed by a line `{word}`")
                    line = lines[i]
                    i += 1
                    if strip_tabs:
                        line = line.lstrip("\t")
                    if line == word:
                        break
                    body.append(line)
                heredocs.append((word, "".join(f"{b}\n" for b in body), bool(quote)))
        if not re.fullmatch(r"[A-Za-z]+", keyword):
            raise DockerfileError(path, start, f"cannot parse {logical[:60]!r}: expected an instruction")
        result.append(_Logical(start, keyword, args, heredocs))
    return result, escape


class _Lexer:
    """Docker's word processing: quotes, escapes and `$VAR` substitution."""

    def __init__(self, path: Path, line: int, scope: dict[str, str], escape: str = "\\") -> None:
        self.path, self.line, self.scope, self.escape = path, line, scope, escape

    def error(self, reason: str) -> DockerfileError:
        return DockerfileError(self.path, self.line, reason)

    def words(self, text: str, split: bool = True, expand: bool = True) -> list[str]:
        words: list[str] = []
        current: list[str] = []
        started = False
        i = 0
        while i < len(text):
            c = text[i]
            if c == self.escape and i + 1 < len(text):
                current.append(text[i + 1])
                i, started = i + 2, True
            elif c == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    raise self.error(f"unterminated single quote in {text!r}")
                current.append(text[i + 1 : end])
                i, started = end + 1, True
            elif c == '"':
                i, started = i + 1, True
                while i < len(text) and text[i] != '"':
                    if text[i] == self.escape and i + 1 < len(text) and text[i + 1] in f'"$`{self.escape}':
                        current.append(text[i + 1])
                        i += 2
                    elif text[i] == "$" and expand:
                        value, i = self.dollar(text, i)
                        current.append(value)
                    else:
                        current.append(text[i])
                        i += 1
                if i >= len(text):
                    raise self.error(f"unterminated double quote in {text!r}")
                i += 1
            elif c == "$" and expand:
                value, i = self.dollar(text, i)
                current.append(value)
                started = True
            elif split and c.isspace():
                if started or current:
                    words.append("".join(current))
                current, started = [], False
                i += 1
            else:
                current.append(c)
                i, started = i + 1, True
        if started or current:
            words.append("".join(current))
        return words

    def word(self, text: str) -> str:
        return "".join(self.words(text, split=False))

    def substitute(self, text: str) -> str:
        """Only `$VAR` substitution (a heredoc body): quotes stay as they are."""
        out: list[str] = []
        i = 0
        while i < len(text):
            if text[i] == self.escape and text[i + 1 : i + 2] == "$":
                out.append("$")
                i += 2
            elif text[i] == "$":
                value, i = self.dollar(text, i)
                out.append(value)
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    def dollar(self, text: str, i: int) -> tuple[str, int]:
        """Expand the `$...` at text[i]; return the value and the index after it."""
        if i + 1 < len(text) and text[i + 1] == "{":
            depth, j = 1, i + 2
            while j < len(text) and depth:
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                j += 1
            if depth:
                raise self.error(f"missing '}}' in {text[i:]!r}")
            body = text[i + 2 : j - 1]
            match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])(.*))?$", body, re.DOTALL)
            if not match:
                raise self.error(f"unsupported substitution ${{{body}}}")
            name, op, word = match.group(1), match.group(2), match.group(3)
            value = self.scope.get(name)
            if op is None:
                return value or "", j
            unset = value is None or (op.startswith(":") and value == "")
            if op.endswith("-"):
                return (self.word(word) if unset else value), j
            if op.endswith("+"):
                return ("" if unset else self.word(word)), j
            if unset:  # ? and :?
                raise self.error(f"{name}: {self.word(word) or 'is not set'}")
            return value, j
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1 :])
        if not match:
            return "$", i + 1
        return self.scope.get(match.group(0), ""), i + 1 + match.end()


def _json_list(text: str) -> list[str] | None:
    if not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def _take_flags(args: str) -> tuple[list[tuple[str, str | None]], str]:
    flags: list[tuple[str, str | None]] = []
    while True:
        match = _FLAG.match(args)
        if not match:
            return flags, args.strip()
        flags.append((match.group(1).lower(), match.group(2)))
        args = args[match.end() :]


def _platform_args() -> dict[str, str]:
    arch = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm"}.get(platform.machine(), platform.machine())
    return {
        "TARGETPLATFORM": f"linux/{arch}",
        "TARGETOS": "linux",
        "TARGETARCH": arch,
        "TARGETVARIANT": "",
        "BUILDPLATFORM": f"linux/{arch}",
        "BUILDOS": "linux",
        "BUILDARCH": arch,
        "BUILDVARIANT": "",
    }


def _in_writable_root(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    return bool(parts) and parts[0] in WRITABLE_ROOTS


# ---- parsing: one function per instruction ----------------------------------------------


@dataclass
class _Parse:
    """One pass over a Dockerfile: what the instructions read so far have set."""

    path: Path
    build_args: dict[str, str]
    host: HostInfo | None
    check_base: bool
    escape: str
    strict: bool  # for the bwrap builder: what it cannot follow is an error, not a note
    notes: list[str] = field(default_factory=list)
    global_args: dict[str, str] = field(default_factory=dict)  # ARGs before FROM: usable in FROM, importable after it
    args: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    shell: tuple[str, ...] = DEFAULT_SHELL
    base: StandIn | None = None
    stage: str | None = None
    stages: list[str] = field(default_factory=list)  # the `AS` names so far
    images: list[str] = field(default_factory=list)
    from_line: int = 0
    instructions: list[Instruction] = field(default_factory=list)
    platform_args: dict[str, str] = field(default_factory=_platform_args)

    def scope(self) -> dict[str, str]:
        """The variables `$VAR` expands from: ARG values before FROM, then ARG and ENV values."""
        if self.base is None:
            return dict(self.global_args)
        merged = {"PATH": DEFAULT_PATH}
        merged.update(self.args)
        merged.update(self.env)
        return merged

    def lexer(self, line: int) -> _Lexer:
        return _Lexer(self.path, line, self.scope(), self.escape)

    def fail(self, line: int, reason: str) -> DockerfileError:
        return DockerfileError(self.path, line, reason)

    def note(self, line: int, text: str) -> None:
        self.notes.append(f"{self.path}:{line}: {text}")

    def refuse(self, line: int, reason: str) -> None:
        """What the bwrap builder cannot follow: an error for it, a note for a reader."""
        if self.strict:
            raise self.fail(line, reason)
        self.note(line, reason)


def _arg(parse: _Parse, item: _Logical) -> None:
    if not item.args:
        raise parse.fail(item.line, "ARG needs a name")
    for word in parse.lexer(item.line).words(item.args, expand=False):
        name, has_default, default = word.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise parse.fail(item.line, f"ARG {word!r}: not a valid name")
        target = parse.args if parse.base else parse.global_args
        if name in parse.build_args:
            target[name] = parse.build_args[name]
        elif has_default:
            target[name] = parse.lexer(item.line).word(default)  # sees the ARGs before it on this line
        elif parse.base and name in parse.global_args:
            target[name] = parse.global_args[name]
        elif name in parse.platform_args:
            target[name] = parse.platform_args[name]


def _from(parse: _Parse, item: _Logical) -> None:
    line = item.line
    if parse.base is not None:
        parse.refuse(
            line,
            f"a second FROM (the first is at line {parse.from_line}): multi-stage builds are not "
            "supported by the bwrap builder; use the docker backend or flatten the stages",
        )
        # a reader goes on with a new stage, which starts from its image, not from the stage before
        parse.args, parse.env, parse.workdir, parse.shell, parse.stage = {}, {}, "/", DEFAULT_SHELL, None
    flags, rest = _take_flags(item.args)
    for name, value in flags:
        if name == "platform":
            parse.note(line, f"FROM --platform={value} ignored: the host's platform is used")
        else:
            parse.refuse(line, f"FROM --{name}: unsupported flag")
    words = parse.lexer(line).words(rest)
    if len(words) == 3 and words[1].lower() == "as":
        parse.stage = words[2]
    elif len(words) != 1:
        raise parse.fail(line, f"FROM {rest!r}: expected `FROM image [AS name]`")
    if words[0].lower() not in (s.lower() for s in parse.stages):
        parse.images.append(words[0])
    if parse.stage:
        parse.stages.append(parse.stage)
    parse.base = stand_in(words[0], parse.host)
    if parse.check_base and not parse.base.ok:
        raise parse.fail(line, parse.base.reason)
    for note in parse.base.notes:
        parse.note(line, note)
    parse.from_line = line


def _env(parse: _Parse, item: _Logical) -> None:
    line, rest = item.line, item.args
    if not rest:
        raise parse.fail(line, "ENV needs a name and a value")
    lexer = parse.lexer(line)
    first = rest.split(None, 1)[0]
    updates: dict[str, str] = {}
    if "=" in first:
        for word in lexer.words(rest):
            name, has_value, value = word.partition("=")
            if not has_value or not name:
                raise parse.fail(line, f"ENV {word!r}: expected name=value (mixing `ENV a=b` and `ENV a b` forms?)")
            updates[name] = value
    else:
        parts = rest.split(None, 1)
        if len(parts) < 2:
            raise parse.fail(line, f"ENV {first}: needs a value (`ENV {first}=value`)")
        updates[lexer.word(first)] = lexer.word(parts[1])
    parse.env.update(updates)  # all pairs see the values from before this ENV, as in Docker


def _workdir(parse: _Parse, item: _Logical) -> None:
    line, rest = item.line, item.args
    if not rest:
        raise parse.fail(line, "WORKDIR needs a path")
    target = parse.lexer(line).word(rest).strip()
    new = posixpath.normpath(posixpath.join(parse.workdir, target))
    new = "/" + new.lstrip("/")
    if new != "/" and not _in_writable_root(new):
        visible = new.split("/")[1] in ("usr", "bin", "sbin", "lib", "lib64", "opt", "etc")
        if not (visible and Path(new).is_dir()):
            parse.refuse(
                line,
                f"WORKDIR {new}: {WRITABLE_TEXT}; a directory elsewhere cannot be created (use a WORKDIR under /app)",
            )
        else:
            parse.note(line, f"WORKDIR {new} is the host's directory, read-only in the sandbox")
    parse.workdir = new
    parse.instructions.append(Instruction("WORKDIR", line, f"WORKDIR {rest}", parse.workdir))


def _copy(parse: _Parse, item: _Logical) -> None:
    keyword, line = item.keyword, item.line
    lexer = parse.lexer(line)
    flags, rest = _take_flags(item.args)
    chmod: int | None = None
    for name, value in flags:
        if name == "from":
            parse.refuse(
                line,
                f"{keyword} --from={value}: copies from another stage or image (multi-stage build) "
                "are not supported by the bwrap builder; use the docker backend",
            )
        elif name == "chown":
            parse.note(line, f"{keyword} --chown={value} ignored: files belong to root")
        elif name == "chmod":
            if value and re.fullmatch(r"[0-7]{3,4}", value):
                chmod = int(value, 8)
            else:
                parse.note(line, f"{keyword} --chmod={value} ignored: only octal modes are applied")
        elif name == "link":
            pass  # a layer-cache hint with no effect here
        else:
            parse.refuse(line, f"{keyword} --{name}: unsupported flag")
    listed = _json_list(rest)
    words = [lexer.word(w) for w in listed] if listed is not None else lexer.words(rest)
    if len(words) < 2:
        raise parse.fail(line, f"{keyword} needs at least one source and a destination")
    *raw_sources, raw_dest = words
    heredocs = {word: (body, quoted) for word, body, quoted in item.heredocs}
    sources: list[CopySource] = []
    for source in raw_sources:
        marker = re.fullmatch(r"<<-?([\"']?)([A-Za-z_][A-Za-z0-9_]*)\1", source)
        if marker and marker.group(2) in heredocs:
            body, quoted = heredocs[marker.group(2)]
            content = body if quoted else lexer.substitute(body)
            sources.append(CopySource("", marker.group(2), content.encode()))
            continue
        if _URL.match(source):
            parse.refuse(
                line,
                f"ADD {source}: needs the network at build time; download it in a RUN step"
                if keyword == "ADD"
                else f"COPY {source}: COPY cannot fetch a URL; download it in a RUN step",
            )
        sources.append(CopySource(source))
    dest = posixpath.normpath(posixpath.join(parse.workdir, raw_dest))
    dest = "/" + dest.lstrip("/")
    if not _in_writable_root(dest):
        parse.refuse(
            line,
            f"{keyword} to {dest}: {WRITABLE_TEXT} (the host's system directories are read-only); "
            "copy into one of them",
        )
    dest_is_dir = raw_dest.endswith("/") or raw_dest in (".", "..") or raw_dest.endswith("/.")
    text = f"{keyword} {item.args}"
    if item.heredocs:
        text += "".join(f"\n{body}{word}" for word, body, _ in item.heredocs)
    parse.instructions.append(
        Instruction(
            keyword, line, text, parse.workdir, sources=sources, dest=dest, dest_is_dir=dest_is_dir, chmod=chmod
        )
    )


def _run(parse: _Parse, item: _Logical) -> None:
    line = item.line
    flags, rest = _take_flags(item.args)
    network = True
    for name, value in flags:
        if name == "mount":
            parse.refuse(
                line,
                f"RUN --mount={value}: BuildKit mounts are not supported by the bwrap builder; "
                "drop the flag (caches and secrets are not needed) or copy the files in with COPY",
            )
        elif name == "network":
            if value not in ("default", "none", "host"):
                raise parse.fail(line, f"RUN --network={value}: expected default, none or host")
            network = value != "none"
        elif name == "security":
            parse.note(line, f"RUN --security={value} ignored")
        else:
            parse.refuse(line, f"RUN --{name}: unsupported flag")
    if not rest:
        raise parse.fail(line, "RUN needs a command")
    text = f"RUN {item.args}"
    stdin: str | None = None
    listed = _json_list(rest)
    if listed is not None:
        if not listed:
            raise parse.fail(line, "RUN [] needs a command")
        command: str | list[str] = listed
    elif item.heredocs:
        text += "".join(f"\n{body}{word}" for word, body, _ in item.heredocs)
        first = _HEREDOC.match(rest)
        if first and rest[first.end() :].strip() == "" and len(item.heredocs) == 1:
            body = item.heredocs[0][1]  # `RUN <<EOF ... EOF`: the body is the script
            if body.startswith("#!"):
                command = 'f=$(mktemp) && cat > "$f" && chmod +x "$f" && "$f"; rc=$?; rm -f "$f"; exit $rc'
                stdin = body
            else:
                command = body
        else:  # `RUN python3 <<EOF ... EOF`: the shell reads the heredocs itself
            command = rest + "\n" + "".join(f"{body}{word}\n" for word, body, _ in item.heredocs)
    else:
        command = rest
    parse.instructions.append(
        Instruction(
            "RUN",
            line,
            text,
            parse.workdir,
            env={**parse.args, **parse.env},
            command=command,
            shell=parse.shell,
            stdin=stdin,
            network=network,
        )
    )


def _shell(parse: _Parse, item: _Logical) -> None:
    value = _json_list(item.args)
    if not value:
        raise parse.fail(item.line, 'SHELL needs the JSON form, e.g. SHELL ["/bin/bash", "-c"]')
    parse.shell = tuple(value)


def _ignored(parse: _Parse, item: _Logical) -> None:
    parse.note(item.line, f"{item.keyword} ignored: {_IGNORED[item.keyword]}")


_INSTRUCTIONS: dict[str, Callable[[_Parse, _Logical], None]] = {
    "ARG": _arg,
    "FROM": _from,
    "ENV": _env,
    "WORKDIR": _workdir,
    "COPY": _copy,
    "ADD": _copy,
    "RUN": _run,
    "SHELL": _shell,
    **{keyword: _ignored for keyword in _IGNORED},
}


def parse_dockerfile(
    path: Path | str,
    build_args: dict[str, str] | None = None,
    *,
    text: str | None = None,
    check_base: bool = True,
    host: HostInfo | None = None,
) -> Dockerfile:
    """Read a Dockerfile for the bwrap builder. Raises `DockerfileError` (`path:line: why`)
    for anything the host cannot honour, including (with `check_base`) a base image the host
    cannot stand in for."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text()
        except OSError as exc:
            raise DockerfileError(path, None, f"cannot read the Dockerfile: {exc.strerror or exc}") from exc
    return _parse(path, text, build_args or {}, host, check_base=check_base, strict=True)


def read_dockerfile(path: Path | str, *, text: str | None = None, host: HostInfo | None = None) -> Dockerfile:
    """What a Dockerfile says, for a reader that builds nothing. What the bwrap builder cannot
    follow (a second stage, COPY --from, RUN --mount, a path outside the writable roots, a URL
    to fetch, an unknown flag, a base image the host cannot stand in for) is a note, not an
    error. With several stages, `instructions` holds every stage's in order, `images` every
    stage's image, and `env`, `workdir` and `stage` are the last stage's. What Docker could not
    read either (no FROM, an unknown instruction, a bad quote) raises `DockerfileError`."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise DockerfileError(path, None, f"cannot read the Dockerfile: {exc.strerror or exc}") from exc
    return _parse(path, text, {}, host, check_base=False, strict=False)


def _parse(
    path: Path, text: str, build_args: dict[str, str], host: HostInfo | None, *, check_base: bool, strict: bool
) -> Dockerfile:
    logical, escape = _split_logical(text, path)
    parse = _Parse(path, dict(build_args), host, check_base, escape, strict)
    for item in logical:
        if parse.base is None and item.keyword not in ("ARG", "FROM"):
            raise parse.fail(
                item.line, f"{item.keyword} before FROM: a Dockerfile starts with FROM (only ARG may come before it)"
            )
        if item.keyword not in _INSTRUCTIONS:
            raise parse.fail(item.line, f"unknown instruction {item.keyword}")
        _INSTRUCTIONS[item.keyword](parse, item)
    if parse.base is None:
        raise DockerfileError(path, None, "no FROM instruction")
    return Dockerfile(
        path,
        parse.base,
        parse.stage,
        parse.instructions,
        parse.env,
        parse.workdir,
        parse.args,
        parse.notes,
        parse.images,
    )
