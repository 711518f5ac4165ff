"""Dockerfiles on a host without a container engine.

`parse_dockerfile` reads a Dockerfile into the few instructions that change a sandbox's files
or environment (WORKDIR, COPY/ADD, RUN), with variables already resolved, plus the final ENV
and WORKDIR. The bwrap backend runs on the host's /usr, so `stand_in` decides whether the host
can stand in for the base image: Debian/Ubuntu/buildpack-deps, Debian-based `python:*` and the
Terminal-Bench base images can (with notes where versions differ); anything else cannot.

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
import os
import platform
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from posttrain.sandbox.interface import DEFAULT_PATH, SandboxError
from posttrain.sandbox.overlay import OVERLAY_DIRS, SYSTEM_DIRS

# the sandbox workspace directories, and the system directories a build writes through overlays
WRITABLE_ROOTS = (*OVERLAY_DIRS, *SYSTEM_DIRS)
WRITABLE_TEXT = ("only /app, /tmp, /tests, /logs, /root, /solution and (over the host's) /usr, /etc, /var, /opt "
                 "are writable in a bwrap sandbox")
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


# ---- the base image ---------------------------------------------------------------------


@dataclass
class StandIn:
    """Whether the host's system directories can stand in for a base image."""

    image: str
    ok: bool
    notes: list[str] = field(default_factory=list)  # version differences worth knowing
    reason: str = ""  # why not, when not ok


@dataclass(frozen=True)
class HostInfo:
    os_id: str  # "debian"
    os_version: str  # "12"
    codename: str  # "bookworm"
    pretty: str  # "Debian GNU/Linux 12 (bookworm)"
    python: str  # "3.11", "" when /usr/bin/python3 is missing


def host_info() -> HostInfo:
    fields: dict[str, str] = {}
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip('"')
    except OSError:
        pass
    python = ""
    real = os.path.realpath("/usr/bin/python3")
    match = re.fullmatch(r"python(\d+\.\d+)", os.path.basename(real))
    if match and os.path.exists(real):
        python = match.group(1)
    return HostInfo(
        os_id=fields.get("ID", "linux"),
        os_version=fields.get("VERSION_ID", ""),
        codename=fields.get("VERSION_CODENAME", ""),
        pretty=fields.get("PRETTY_NAME", "this host"),
        python=python,
    )


def _cannot(image: str) -> str:
    return (f"FROM {image}: the host cannot stand in for this image (bwrap runs on the host's /usr); "
            "use the docker backend or a debian/ubuntu/python base")


def stand_in(image: str, host: HostInfo | None = None) -> StandIn:
    """Can the host (Debian 12 with python3 3.11 here) play the part of `image`?"""
    host = host or host_info()
    reference = image.strip()
    lowered = reference.lower()
    repository = lowered.split("@", 1)[0]
    path, _, last = repository.rpartition("/")
    name, _, tag = last.partition(":")
    tag = tag or "latest"
    host_text = f"the host's {host.pretty}" + (f" with python3 {host.python}" if host.python else "")

    if "t-bench" in lowered or "terminal-bench" in lowered:
        notes = [f"FROM {image}: a Terminal-Bench base image; {host_text} stands in for it"]
        version = re.search(r"python-?(\d+)[-.](\d+)", last)
        if version and f"{version.group(1)}.{version.group(2)}" != host.python:
            notes.append(f"FROM {image}: python3 is the host's {host.python or 'none'}, "
                         f"not {version.group(1)}.{version.group(2)}")
        distro = re.search(r"(ubuntu|debian)-?(\d+)?(?:[-.](\d+))?", last)
        if distro and not (distro.group(1) == host.os_id and (distro.group(2) or "") in ("", host.os_version)):
            notes.append(f"FROM {image}: system packages are the host's {host.pretty}, not {distro.group(0)}")
        return StandIn(image, True, notes)

    if name == "scratch" and not path:
        return StandIn(image, False, reason=_cannot(image))
    if name in ("python", "debian", "ubuntu", "buildpack-deps"):
        if "alpine" in tag or "windows" in tag or "nanoserver" in tag:
            return StandIn(image, False, reason=_cannot(image))
        notes: list[str] = []
        if name == "python":
            version = re.match(r"(\d+)(?:\.(\d+))?", tag)
            wanted = f"{version.group(1)}.{version.group(2)}" if version and version.group(2) else (
                version.group(1) if version else "")
            if wanted and not (host.python == wanted or host.python.startswith(wanted + ".")):
                notes.append(f"FROM {image}: python3 is the host's {host.python or 'none'}, not {wanted}")
            notes.append(f"FROM {image}: `pip install` goes into the host's python3 through an overlay "
                         "(its own packages are the host's)")
        elif name == "ubuntu":
            notes.append(f"FROM {image}: {host_text} stands in; Ubuntu package names and versions can differ")
        else:
            if not _debian_tag_matches(tag, host):
                notes.append(f"FROM {image}: {host_text} stands in; package versions can differ")
        return StandIn(image, True, notes)
    return StandIn(image, False, reason=_cannot(image))


def _debian_tag_matches(tag: str, host: HostInfo) -> bool:
    head = re.split(r"[-]", tag, maxsplit=1)[0]
    return head in ("latest", "stable", "slim", host.codename, host.os_version) or (
        bool(host.os_version) and head.startswith(host.os_version + "."))


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
            parts.append(line[:match.start()])
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
                current.append(text[i + 1:end])
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
            if text[i] == self.escape and text[i + 1:i + 2] == "$":
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
            body = text[i + 2:j - 1]
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
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1:])
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
        args = args[match.end():]


def _platform_args() -> dict[str, str]:
    arch = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm"}.get(platform.machine(), platform.machine())
    return {"TARGETPLATFORM": f"linux/{arch}", "TARGETOS": "linux", "TARGETARCH": arch, "TARGETVARIANT": "",
            "BUILDPLATFORM": f"linux/{arch}", "BUILDOS": "linux", "BUILDARCH": arch, "BUILDVARIANT": ""}


def _in_writable_root(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    return bool(parts) and parts[0] in WRITABLE_ROOTS


# ---- parsing ----------------------------------------------------------------------------


def parse_dockerfile(path: Path | str, build_args: dict[str, str] | None = None, *, text: str | None = None,
                     check_base: bool = True, host: HostInfo | None = None) -> Dockerfile:
    """Read a Dockerfile for the bwrap builder. Raises `DockerfileError` (`path:line: why`)
    for anything the host cannot honour, including (with `check_base`) a base image the host
    cannot stand in for."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text()
        except OSError as exc:
            raise DockerfileError(path, None, f"cannot read the Dockerfile: {exc.strerror or exc}") from exc
    build_args = dict(build_args or {})
    logical, escape = _split_logical(text, path)

    notes: list[str] = []
    global_args: dict[str, str] = {}  # ARGs before FROM: usable in FROM, importable after it
    args: dict[str, str] = {}
    env: dict[str, str] = {}
    workdir = "/"
    shell: tuple[str, ...] = DEFAULT_SHELL
    base: StandIn | None = None
    stage: str | None = None
    from_line = 0
    instructions: list[Instruction] = []
    platform_args = _platform_args()

    def scope() -> dict[str, str]:
        merged = {"PATH": DEFAULT_PATH}
        merged.update(args)
        merged.update(env)
        return merged

    for item in logical:
        line, keyword, rest = item.line, item.keyword, item.args
        lexer = _Lexer(path, line, scope() if base else dict(global_args), escape)

        def fail(reason: str) -> DockerfileError:
            return DockerfileError(path, line, reason)

        if keyword == "ARG":
            if not rest:
                raise fail("ARG needs a name")
            for word in lexer.words(rest, expand=False):
                name, has_default, default = word.partition("=")
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    raise fail(f"ARG {word!r}: not a valid name")
                target = args if base else global_args
                if name in build_args:
                    target[name] = build_args[name]
                elif has_default:
                    target[name] = _Lexer(path, line, scope() if base else dict(global_args), escape).word(default)
                elif base and name in global_args:
                    target[name] = global_args[name]
                elif name in platform_args:
                    target[name] = platform_args[name]
            continue

        if base is None and keyword != "FROM":
            raise fail(f"{keyword} before FROM: a Dockerfile starts with FROM (only ARG may come before it)")

        if keyword == "FROM":
            if base is not None:
                raise fail(f"a second FROM (the first is at line {from_line}): multi-stage builds are not "
                           "supported by the bwrap builder; use the docker backend or flatten the stages")
            flags, rest = _take_flags(rest)
            for name, value in flags:
                if name == "platform":
                    notes.append(f"{path}:{line}: FROM --platform={value} ignored: the host's platform is used")
                else:
                    raise fail(f"FROM --{name}: unsupported flag")
            words = lexer.words(rest)
            if len(words) == 3 and words[1].lower() == "as":
                stage = words[2]
            elif len(words) != 1:
                raise fail(f"FROM {rest!r}: expected `FROM image [AS name]`")
            base = stand_in(words[0], host)
            if check_base and not base.ok:
                raise fail(base.reason)
            notes.extend(f"{path}:{line}: {note}" for note in base.notes)
            from_line = line
            continue

        if keyword == "ENV":
            if not rest:
                raise fail("ENV needs a name and a value")
            first = rest.split(None, 1)[0]
            updates: dict[str, str] = {}
            if "=" in first:
                for word in lexer.words(rest):
                    name, has_value, value = word.partition("=")
                    if not has_value or not name:
                        raise fail(f"ENV {word!r}: expected name=value (mixing `ENV a=b` and `ENV a b` forms?)")
                    updates[name] = value
            else:
                parts = rest.split(None, 1)
                if len(parts) < 2:
                    raise fail(f"ENV {first}: needs a value (`ENV {first}=value`)")
                updates[lexer.word(first)] = lexer.word(parts[1])
            env.update(updates)  # all pairs see the values from before this ENV, as in Docker
            continue

        if keyword == "WORKDIR":
            if not rest:
                raise fail("WORKDIR needs a path")
            target = lexer.word(rest).strip()
            new = posixpath.normpath(posixpath.join(workdir, target))
            new = "/" + new.lstrip("/")
            if new != "/" and not _in_writable_root(new):
                visible = new.split("/")[1] in ("usr", "bin", "sbin", "lib", "lib64", "opt", "etc")
                if not (visible and Path(new).is_dir()):
                    raise fail(f"WORKDIR {new}: {WRITABLE_TEXT}; a directory elsewhere cannot be created "
                               "(use a WORKDIR under /app)")
                notes.append(f"{path}:{line}: WORKDIR {new} is the host's directory, read-only in the sandbox")
            workdir = new
            instructions.append(Instruction("WORKDIR", line, f"WORKDIR {rest}", workdir))
            continue

        if keyword in ("COPY", "ADD"):
            instructions.append(_parse_copy(item, lexer, workdir, notes, path))
            continue

        if keyword == "RUN":
            instructions.append(_parse_run(item, workdir, shell, {**args, **env}, notes, path))
            continue

        if keyword == "SHELL":
            value = _json_list(rest)
            if not value:
                raise fail('SHELL needs the JSON form, e.g. SHELL ["/bin/bash", "-c"]')
            shell = tuple(value)
            continue

        if keyword in _IGNORED:
            notes.append(f"{path}:{line}: {keyword} ignored: {_IGNORED[keyword]}")
            continue

        raise fail(f"unknown instruction {keyword}")

    if base is None:
        raise DockerfileError(path, None, "no FROM instruction")
    return Dockerfile(path, base, stage, instructions, env, workdir, args, notes)


def _parse_copy(item: _Logical, lexer: _Lexer, workdir: str, notes: list[str], path: Path) -> Instruction:
    keyword, line = item.keyword, item.line

    def fail(reason: str) -> DockerfileError:
        return DockerfileError(path, line, reason)

    flags, rest = _take_flags(item.args)
    chmod: int | None = None
    for name, value in flags:
        if name == "from":
            raise fail(f"{keyword} --from={value}: copies from another stage or image (multi-stage build) "
                       "are not supported by the bwrap builder; use the docker backend")
        if name == "chown":
            notes.append(f"{path}:{line}: {keyword} --chown={value} ignored: files belong to root")
        elif name == "chmod":
            if value and re.fullmatch(r"[0-7]{3,4}", value):
                chmod = int(value, 8)
            else:
                notes.append(f"{path}:{line}: {keyword} --chmod={value} ignored: only octal modes are applied")
        elif name == "link":
            pass  # a layer-cache hint with no effect here
        else:
            raise fail(f"{keyword} --{name}: unsupported flag")
    listed = _json_list(rest)
    words = [lexer.word(w) for w in listed] if listed is not None else lexer.words(rest)
    if len(words) < 2:
        raise fail(f"{keyword} needs at least one source and a destination")
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
            if keyword == "ADD":
                raise fail(f"ADD {source}: needs the network at build time; download it in a RUN step")
            raise fail(f"COPY {source}: COPY cannot fetch a URL; download it in a RUN step")
        sources.append(CopySource(source))
    dest = posixpath.normpath(posixpath.join(workdir, raw_dest))
    dest = "/" + dest.lstrip("/")
    if not _in_writable_root(dest):
        raise fail(f"{keyword} to {dest}: {WRITABLE_TEXT} (the host's system directories are read-only); "
                   "copy into one of them")
    dest_is_dir = raw_dest.endswith("/") or raw_dest in (".", "..") or raw_dest.endswith("/.")
    text = f"{keyword} {item.args}"
    if item.heredocs:
        text += "".join(f"\n{body}{word}" for word, body, _ in item.heredocs)
    return Instruction(keyword, line, text, workdir, sources=sources, dest=dest, dest_is_dir=dest_is_dir,
                       chmod=chmod)


def _parse_run(item: _Logical, workdir: str, shell: tuple[str, ...], env: dict[str, str], notes: list[str],
               path: Path) -> Instruction:
    line = item.line

    def fail(reason: str) -> DockerfileError:
        return DockerfileError(path, line, reason)

    flags, rest = _take_flags(item.args)
    network = True
    for name, value in flags:
        if name == "mount":
            raise fail(f"RUN --mount={value}: BuildKit mounts are not supported by the bwrap builder; "
                       "drop the flag (caches and secrets are not needed) or copy the files in with COPY")
        if name == "network":
            if value not in ("default", "none", "host"):
                raise fail(f"RUN --network={value}: expected default, none or host")
            network = value != "none"
        elif name == "security":
            notes.append(f"{path}:{line}: RUN --security={value} ignored")
        else:
            raise fail(f"RUN --{name}: unsupported flag")
    if not rest:
        raise fail("RUN needs a command")
    text = f"RUN {item.args}"
    stdin: str | None = None
    listed = _json_list(rest)
    if listed is not None:
        if not listed:
            raise fail("RUN [] needs a command")
        command: str | list[str] = listed
    elif item.heredocs:
        text += "".join(f"\n{body}{word}" for word, body, _ in item.heredocs)
        first = _HEREDOC.match(rest)
        if first and rest[first.end():].strip() == "" and len(item.heredocs) == 1:
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
    return Instruction("RUN", line, text, workdir, env=dict(env), command=command, shell=shell, stdin=stdin,
                       network=network)
