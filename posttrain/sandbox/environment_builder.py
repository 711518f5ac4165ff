"""Build a task's environment into cached, read-only overlay layers for the bwrap backend.

    build_environment(Environment(...))           # a task record: files, setup commands
    build_environment(Path("task/environment"))   # a Harbor task: its Dockerfile and context
        -> BuiltEnvironment(layers, workdir, env, notes)  ->  .spec()  ->  BwrapSandbox(spec)

Each step makes at most one layer: consecutive WORKDIR/COPY/ADD instructions (or a record's
files) are written straight into one layer on the host; each RUN (or setup command) runs in a
build sandbox over the layers so far (network on, no disk quota, the ENV/ARG values and
WORKDIR in effect) and what it wrote, deletions included as overlayfs whiteouts, is exported
as its layer.

Every layer is cached as `cache_dir/layers/<key>`, key = sha256(parent key, the instruction,
the ENV/ARG/WORKDIR it runs with and, for COPY/ADD, the hashes of the copied files). A second
build of the same environment runs nothing and returns the same paths; an edited RUN line
rebuilds from that line on. A layer is built under `cache_dir/staging/` and renamed into
place, so a killed build leaves no half layer under `layers/`; an `fcntl.flock` on
`layers/<key>.lock` makes concurrent builds of one environment build each layer once.

Layers that hold nothing (a RUN that wrote no file) are cached but left out of `layers`,
which keeps the overlay stack short.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import posixpath
import re
import shutil
import stat
import tarfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from posttrain.cache import cache_dir
from posttrain.sandbox.dockerfile import (
    WRITABLE_ROOTS,
    WRITABLE_TEXT,
    DockerfileError,
    Instruction,
    parse_dockerfile,
)
from posttrain.sandbox.interface import ExecResult, SandboxError, SandboxLimits, SandboxSpec
from posttrain.sandbox.overlay import SYSTEM_DIRS
from posttrain.tasks.records import Environment

BUILDER_VERSION = "posttrain-environment-builder/2"  # part of every key: bump to invalidate caches
DEFAULT_BUILD_TIMEOUT_S = 900.0
_STDERR_TAIL_LINES = 20
_MAX_LOWERDIR_CHARS = 3000  # the overlay mount options must fit in a page (4096 bytes) in all


def default_cache_dir() -> Path:
    return cache_dir() / "environments"


@dataclass
class BuiltEnvironment:
    """An environment ready to become a `SandboxSpec`: shared read-only layers, lowest first."""

    layers: list[Path]
    workdir: str
    env: dict[str, str]
    notes: list[str] = field(default_factory=list)
    allow_network: bool = False  # the task's policy (a record's allow_network); builds always have network
    key: str = ""  # the key of the last layer: equal keys, equal environments
    image: str | None = None  # docker backend: the task's image (built by the engine or pulled); no layers
    cache_hits: int = 0  # steps found in the cache
    steps_run: int = 0  # steps built now (RUN steps executed, file layers written)
    log: list[str] = field(default_factory=list)  # one line per step: "hit|built <key> <where> <instruction>"

    @property
    def system_writable(self) -> bool:
        """Some layer changed a system directory (apt/pip installs, COPY into /usr/local):
        its sandboxes mount those directories as overlays too."""
        return any((layer / name).exists() for layer in self.layers for name in SYSTEM_DIRS)

    def spec(self, limits: SandboxLimits | None = None, allow_network: bool | None = None) -> SandboxSpec:
        return SandboxSpec(
            layers=list(self.layers),
            workdir=self.workdir,
            env=dict(self.env),
            limits=limits or SandboxLimits(),
            allow_network=self.allow_network if allow_network is None else allow_network,
            system_writable=self.system_writable,
            image=self.image,
        )


def build_environment(
    source: Environment | Path | str,
    cache_dir: Path | str | None = None,
    *,
    build_args: dict[str, str] | None = None,
    timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
    sandbox_dir: Path | None = None,
    build_limits: SandboxLimits | None = None,
) -> BuiltEnvironment:
    """Build (or find in the cache) the layers of `source`: an `Environment` record, a Harbor
    task's `environment/` directory (its Dockerfile; the directory is the build context), a
    Harbor task directory holding `environment/`, or a Dockerfile's path.

    `timeout_s` bounds each RUN step; `build_limits` replaces the build sandboxes' limits
    (default: no memory, CPU or disk quota, 4096 pids). Raises `SandboxError`; errors in a
    Dockerfile are `DockerfileError`s whose message starts with `path:line:`."""
    cache = _Cache(Path(cache_dir) if cache_dir is not None else default_cache_dir())
    limits = build_limits or SandboxLimits(memory_mb=None, pids=4096, cpus=None, disk_mb=None, timeout_s=timeout_s)
    if isinstance(source, Environment):
        plan = _plan_record(source)
    else:
        plan = _plan_dockerfile(Path(source), build_args)
    builder = _Builder(cache, timeout_s, sandbox_dir, limits)
    return builder.build(plan)


# ---- plans: what to build, from either source ---------------------------------------------


@dataclass
class _Entry:
    """One thing written into a files layer, at `dest` relative to the layer root."""

    kind: str  # dir | file | symlink | data | tar
    dest: str
    source: Path | None = None
    data: bytes = b""
    target: str = ""  # symlink target
    mode: int | None = None
    digest: str = ""
    line: int | None = None  # the Dockerfile line it comes from


@dataclass
class _Step:
    kind: str  # "files" or "run"
    where: str  # "path:line" or "environment setup[2]", for the log
    fail: Callable[..., SandboxError]  # fail(reason[, line])
    # files: resolve(view) -> entries, given the layers below
    resolve: Callable[[_View], list[_Entry]] | None = None
    describe: list = field(default_factory=list)  # the instruction text(s), for the key and the log
    # run
    command: str | list[str] = ""
    shell: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    stdin: str | None = None
    network: bool = True


@dataclass
class _Plan:
    origin: str  # for the root key
    steps: list[_Step]
    workdir: str
    env: dict[str, str]
    notes: list[str]
    allow_network: bool


def _plan_record(environment: Environment) -> _Plan:
    workdir = "/" + posixpath.normpath(environment.workdir).lstrip("/")

    def fail_files(reason: str, line: int | None = None) -> SandboxError:
        return SandboxError(f"environment files: {reason}")

    _check_workdir(workdir, fail_files)

    def resolve(view: _View) -> list[_Entry]:
        entries: list[_Entry] = []
        if _writable(workdir):
            entries.append(_Entry("dir", workdir.lstrip("/"), mode=_dir_mode(view, workdir.lstrip("/"))))
        for path, content in environment.files.items():
            absolute = "/" + posixpath.normpath(posixpath.join(workdir, path)).lstrip("/")
            if not _writable(absolute):
                raise fail_files(f"{path} -> {absolute}: {WRITABLE_TEXT}")
            data = content.encode()
            entries.append(
                _Entry(
                    "data",
                    absolute.lstrip("/"),
                    data=data,
                    mode=0o755 if content.startswith("#!") else 0o644,
                    digest=hashlib.sha256(data).hexdigest(),
                )
            )
        return entries

    steps: list[_Step] = []
    if environment.files or _writable(workdir):
        steps.append(
            _Step("files", "environment files", fail_files, resolve=resolve, describe=[f"FILES workdir={workdir}"])
        )
    for index, command in enumerate(environment.setup, start=1):
        label = f"environment setup[{index}]"
        steps.append(
            _Step(
                "run",
                label,
                lambda reason, label=label: SandboxError(f"{label}: {reason}"),
                describe=[f"SETUP {command}"],
                command=command,
                shell=("bash", "-c"),
                env=dict(environment.env),
                workdir=workdir,
            )
        )
    return _Plan("record", steps, workdir, dict(environment.env), [], environment.allow_network)


def _locate_dockerfile(path: Path) -> tuple[Path, Path]:
    if path.is_file():
        return path, path.parent
    for candidate in (path / "Dockerfile", path / "environment" / "Dockerfile"):
        if candidate.is_file():
            return candidate, candidate.parent
    if not path.exists():
        raise SandboxError(f"{path}: no such environment directory")
    compose = [p.name for p in (path / "docker-compose.yaml", path / "docker-compose.yml") if p.is_file()]
    hint = f" ({compose[0]} alone is not supported by the bwrap builder)" if compose else ""
    raise SandboxError(f"{path}: no Dockerfile (looked for {path}/Dockerfile and {path}/environment/Dockerfile){hint}")


def _plan_dockerfile(path: Path, build_args: dict[str, str] | None) -> _Plan:
    dockerfile_path, context = _locate_dockerfile(path)
    dockerfile = parse_dockerfile(dockerfile_path, build_args)
    ignore = _DockerIgnore(context)
    notes = list(dockerfile.notes)
    steps: list[_Step] = []
    group: list[Instruction] = []

    def flush() -> None:
        if not group:
            return
        instructions = list(group)
        group.clear()
        first = instructions[0]

        def fail(reason: str, line: int | None = None) -> SandboxError:
            return DockerfileError(dockerfile_path, line or first.line, reason)

        def resolve(view: _View) -> list[_Entry]:
            entries: list[_Entry] = []
            for instruction in instructions:
                if instruction.keyword == "WORKDIR":
                    new = _Entry("dir", instruction.workdir.lstrip("/"), line=instruction.line)
                    if _writable(instruction.workdir):
                        new.mode = _dir_mode(view, new.dest)
                        view.plan(new)
                        entries.append(new)
                else:
                    for new in _resolve_copy(instruction, context, ignore, view, dockerfile_path):
                        new.line = instruction.line
                        view.plan(new)
                        entries.append(new)
            return entries

        where = f"{dockerfile_path}:{first.line}" + (f"-{instructions[-1].line}" if len(instructions) > 1 else "")
        steps.append(_Step("files", where, fail, resolve=resolve, describe=[[i.text, i.workdir] for i in instructions]))

    for instruction in dockerfile.instructions:
        if instruction.keyword != "RUN":
            group.append(instruction)
            continue
        flush()
        steps.append(
            _Step(
                "run",
                f"{dockerfile_path}:{instruction.line}",
                lambda reason, line=instruction.line: DockerfileError(dockerfile_path, line, reason),
                describe=[instruction.text],
                command=instruction.command,
                shell=instruction.shell,
                env=dict(instruction.env),
                workdir=instruction.workdir,
                stdin=instruction.stdin,
                network=instruction.network,
            )
        )
    flush()
    return _Plan(f"dockerfile {dockerfile.base.image}", steps, dockerfile.workdir, dict(dockerfile.env), notes, False)


def _writable(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    return bool(parts) and parts[0] in WRITABLE_ROOTS


def _check_workdir(workdir: str, fail: Callable[[str], SandboxError]) -> None:
    if workdir != "/" and not _writable(workdir) and not Path(workdir).is_dir():
        raise fail(f"workdir {workdir}: {WRITABLE_TEXT}; a directory elsewhere cannot be created")


# ---- COPY / ADD -----------------------------------------------------------------------------


def _resolve_copy(
    instruction: Instruction, context: Path, ignore: _DockerIgnore, view: _View, dockerfile: Path
) -> list[_Entry]:
    keyword = instruction.keyword

    def fail(reason: str) -> DockerfileError:
        return DockerfileError(dockerfile, instruction.line, reason)

    real_context = os.path.realpath(context)
    found: list[tuple[str, Path | None, bytes | None]] = []  # (name, host path, heredoc content)
    for source in instruction.sources:
        if source.content is not None:
            found.append((source.heredoc_name, None, source.content))
            continue
        rel = posixpath.normpath(source.path.lstrip("/") or ".")
        if rel == ".." or rel.startswith("../"):
            raise fail(f"{keyword} {source.path}: outside the build context {context}")
        if glob.has_magic(rel):
            matches = sorted(glob.glob(rel, root_dir=context, include_hidden=True))
            matches = [m for m in matches if not ignore.excluded(m)]
            if not matches:
                raise fail(f"{keyword} {source.path}: no file in the build context {context} matches")
        else:
            if not os.path.lexists(context / rel):
                raise fail(f"{keyword} {source.path}: not found in the build context {context}")
            if rel != "." and ignore.excluded(rel):
                raise fail(f"{keyword} {source.path}: excluded by {context}/.dockerignore")
            matches = [rel]
        for match in matches:
            host = Path(os.path.realpath(context / match))
            if host != Path(real_context) and not str(host).startswith(real_context + os.sep):
                raise fail(f"{keyword} {source.path}: {match} leads outside the build context {context}")
            if not host.exists():
                raise fail(f"{keyword} {source.path}: {match} is a broken link")
            found.append((posixpath.basename(match) if match != "." else "", host, None))

    dest = instruction.dest.lstrip("/")
    if len(found) > 1 and not instruction.dest_is_dir and view.kind(dest) != "dir":
        raise fail(f"{keyword} with several sources needs a destination directory ending in /, not {instruction.dest}")
    dest_dir = instruction.dest_is_dir or len(found) > 1 or view.kind(dest) == "dir"
    chmod = instruction.chmod
    entries: list[_Entry] = []
    for name, host, content in found:
        if content is not None:
            target = posixpath.join(dest, name) if dest_dir else dest
            entries.append(
                _Entry("data", target, data=content, mode=chmod or 0o644, digest=hashlib.sha256(content).hexdigest())
            )
        elif host is not None and host.is_dir():
            entries.append(
                _Entry(
                    "dir", dest, mode=chmod or _dir_mode(view, dest, stat.S_IMODE(host.stat().st_mode)), digest="dir"
                )
            )
            entries.extend(_walk(host, dest, context, ignore, chmod))
        elif host is not None and keyword == "ADD" and _is_archive(host):
            entries.append(_Entry("tar", dest, source=host, digest=_file_digest(host)))
        elif host is not None:
            target = posixpath.join(dest, name) if dest_dir else dest
            entries.append(
                _Entry(
                    "file",
                    target,
                    source=host,
                    mode=chmod or stat.S_IMODE(host.stat().st_mode),
                    digest=_file_digest(host),
                )
            )
    return entries


def _walk(root: Path, dest: str, context: Path, ignore: _DockerIgnore, chmod: int | None) -> list[_Entry]:
    entries: list[_Entry] = []
    context_rel = os.path.relpath(root, os.path.realpath(context))
    for current, dirs, files in os.walk(root):
        dirs.sort()
        rel_dir = os.path.relpath(current, root)
        for name in sorted(dirs) + sorted(files):
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if ignore.excluded(os.path.normpath(os.path.join(context_rel, rel))):
                continue
            host = Path(current) / name
            target = posixpath.join(dest, rel)
            info = os.lstat(host)
            if stat.S_ISLNK(info.st_mode):
                link = os.readlink(host)
                entries.append(_Entry("symlink", target, target=link, digest=f"link:{link}"))
            elif stat.S_ISDIR(info.st_mode):
                entries.append(_Entry("dir", target, mode=chmod or stat.S_IMODE(info.st_mode), digest="dir"))
            elif stat.S_ISREG(info.st_mode):
                entries.append(
                    _Entry(
                        "file", target, source=host, mode=chmod or stat.S_IMODE(info.st_mode), digest=_file_digest(host)
                    )
                )
    return entries


def _is_archive(path: Path) -> bool:
    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _DockerIgnore:
    """`.dockerignore` patterns: Go globs with `**`, `!` exceptions, last match wins; a
    pattern that matches a directory excludes what is under it."""

    def __init__(self, context: Path) -> None:
        self.patterns: list[tuple[bool, re.Pattern[str]]] = []
        path = context / ".dockerignore"
        if not path.is_file():
            return
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            line = posixpath.normpath(line[1:].strip() if negate else line).lstrip("/")
            if line and line != ".":
                self.patterns.append((negate, re.compile(_glob_regex(line))))

    def excluded(self, rel: str) -> bool:
        if not self.patterns:
            return False
        rel = posixpath.normpath(rel)
        parts = rel.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        result = False
        for negate, pattern in self.patterns:
            if any(pattern.fullmatch(p) for p in prefixes):
                result = not negate
        return result


def _glob_regex(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            if pattern[i + 2 : i + 3] == "/":
                out.append("(?:.*/)?")
                i += 3
            else:
                out.append(".*")
                i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                out.append("[" + ("^" + body[1:] if body.startswith(("!", "^")) else body) + "]")
                i = end
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


# ---- the layer stack as seen from the host --------------------------------------------------


class _View:
    """What the merged workspace holds at a path, from the host's copy of the layers (top
    layer last) and what the current files step has planned so far."""

    def __init__(self, layers: list[Path]) -> None:
        self.layers = layers
        self.planned: dict[str, str] = {}

    def lookup(self, rel: str) -> os.stat_result | None:
        parts = [p for p in rel.split("/") if p]
        for layer in reversed(self.layers):
            current = layer
            for depth, part in enumerate(parts):
                current = current / part
                try:
                    info = os.lstat(current)
                except OSError:
                    if depth > 0 and _opaque(current.parent):
                        return None  # an opaque directory hides the layers below
                    break  # not in this layer: look lower
                if _whiteout(info):
                    return None
                if depth == len(parts) - 1:
                    return info
                if not stat.S_ISDIR(info.st_mode):
                    return None
        return None

    def kind(self, rel: str) -> str | None:
        rel = posixpath.normpath(rel)
        if rel in self.planned:
            return self.planned[rel]
        info = self.lookup(rel)
        if info is None and rel.split("/")[0] in SYSTEM_DIRS:
            try:  # the system directories' lowest layer is the host's
                info = os.lstat(Path("/") / rel)
            except OSError:
                info = None
        if info is not None:
            return "dir" if stat.S_ISDIR(info.st_mode) else "file"
        return "dir" if rel in WRITABLE_ROOTS else None

    def plan(self, entry: _Entry) -> None:
        kind = "dir" if entry.kind in ("dir", "tar") else "file"
        self.planned[posixpath.normpath(entry.dest)] = kind
        parent = posixpath.dirname(entry.dest)
        while parent:
            self.planned[parent] = "dir"
            parent = posixpath.dirname(parent)


def _dir_mode(view: _View, rel: str, default: int = 0o755) -> int:
    info = view.lookup(rel)
    if info is not None and stat.S_ISDIR(info.st_mode):
        return stat.S_IMODE(info.st_mode)
    if rel == "tmp":
        return 0o1777
    return default


def _whiteout(info: os.stat_result) -> bool:
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _opaque(path: Path) -> bool:
    try:
        return os.getxattr(path, "trusted.overlay.opaque", follow_symlinks=False) == b"y"
    except OSError:
        return False


def _layer_is_empty(layer: Path, below: list[Path]) -> bool:
    """True when the layer changes nothing but mtimes: no file, link, whiteout or opaque
    directory, and only directories that the layers below already have."""
    view = _View(below)
    for current, dirs, files in os.walk(layer):
        if files:
            return False
        rel = os.path.relpath(current, layer)
        if rel != "." and (_opaque(Path(current)) or view.kind(rel) != "dir"):
            return False
        for name in dirs:
            if os.path.islink(os.path.join(current, name)):
                return False
    return True


def _write_entries(root: Path, entries: list[_Entry], view: _View) -> None:
    for entry in entries:
        target = root / entry.dest
        _make_parents(root, entry.dest, view)
        if entry.kind in ("dir", "tar"):
            if os.path.lexists(target) and not target.is_dir():
                target.unlink()
            target.mkdir(exist_ok=True)
            if entry.mode is not None:
                target.chmod(entry.mode)
            if entry.kind == "tar":
                assert entry.source is not None
                with tarfile.open(entry.source) as archive:
                    archive.extractall(target, filter="tar")
            continue
        if os.path.lexists(target):
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
        if entry.kind == "symlink":
            os.symlink(entry.target, target)
        elif entry.kind == "file":
            assert entry.source is not None
            shutil.copyfile(entry.source, target)
            target.chmod(entry.mode if entry.mode is not None else 0o644)
        else:
            target.write_bytes(entry.data)
            target.chmod(entry.mode if entry.mode is not None else 0o644)


def _make_parents(root: Path, rel: str, view: _View) -> None:
    parts = [p for p in rel.split("/") if p][:-1]
    for depth in range(1, len(parts) + 1):
        sub = "/".join(parts[:depth])
        path = root / sub
        if path.is_dir() and not path.is_symlink():
            continue
        if os.path.lexists(path):
            path.unlink()
        path.mkdir()
        path.chmod(_dir_mode(view, sub))


# ---- the cache --------------------------------------------------------------------------


class _Cache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.layers = root / "layers"
        self.staging = root / "staging"
        self.layers.mkdir(parents=True, exist_ok=True)
        self.staging.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.layers / key

    @contextmanager
    def locked(self, key: str) -> Iterator[None]:
        with open(self.layers / f"{key}.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def get_or_build(self, key: str, build: Callable[[Path], None], meta: dict) -> tuple[Path, bool]:
        """The layer for `key`, building it with `build(layer_dir)` when missing; True when
        it was in the cache."""
        final = self.path(key)
        if final.is_dir():
            return final, True
        with self.locked(key):
            if final.is_dir():  # another build made it while we waited
                return final, True
            for stale in self.staging.glob(f"{key}.*"):  # left by a killed build
                shutil.rmtree(stale, ignore_errors=True)
            work = self.staging / f"{key}.{uuid.uuid4().hex[:8]}"
            work.mkdir()
            try:
                layer = work / "layer"
                build(layer)
                if not layer.is_dir():
                    layer.mkdir()
                (self.layers / f"{key}.json").write_text(json.dumps(meta, indent=1) + "\n")
                os.rename(layer, final)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        return final, False


# ---- building -----------------------------------------------------------------------------


class _Builder:
    def __init__(self, cache: _Cache, timeout_s: float, sandbox_dir: Path | None, limits: SandboxLimits) -> None:
        self.cache = cache
        self.timeout_s = timeout_s
        self.sandbox_dir = sandbox_dir
        self.limits = limits

    def build(self, plan: _Plan) -> BuiltEnvironment:
        key = _hash([BUILDER_VERSION, plan.origin])
        stack: list[Path] = []  # non-empty layers, lowest first
        built = BuiltEnvironment([], plan.workdir, plan.env, list(plan.notes), plan.allow_network)
        for step in plan.steps:
            if step.kind == "files":
                view = _View(stack)
                assert step.resolve is not None
                entries = step.resolve(view)
                key = _hash([key, step.describe, [[e.kind, e.dest, e.mode, e.digest, e.target] for e in entries]])
                layer, hit = self.cache.get_or_build(
                    key,
                    lambda dest, entries=entries, view=_View(stack), step=step: self._write(dest, entries, view, step),
                    {"step": step.where, "instruction": step.describe, "created": time.time()},
                )
            else:
                key = _hash(
                    [
                        key,
                        step.describe,
                        step.workdir,
                        sorted(step.env.items()),
                        list(step.shell),
                        step.network,
                        step.stdin,
                    ]
                )
                layer, hit = self.cache.get_or_build(
                    key,
                    lambda dest, step=step, lower=list(stack): self._run(step, lower, dest),
                    {"step": step.where, "instruction": step.describe, "created": time.time()},
                )
            built.cache_hits += hit
            built.steps_run += not hit
            built.log.append(f"{'hit' if hit else 'built'} {key[:12]} {step.where} {_short(step.describe)}")
            if not _layer_is_empty(layer, stack):
                stack.append(layer)
                _check_stack(stack, step.fail)
        built.layers = stack
        built.key = key
        return built

    @staticmethod
    def _write(dest: Path, entries: list[_Entry], view: _View, step: _Step) -> None:
        dest.mkdir()
        for entry in entries:
            try:
                _write_entries(dest, [entry], view)
            except (OSError, tarfile.TarError) as exc:
                source = f" from {entry.source}" if entry.source else ""
                raise step.fail(f"cannot write /{entry.dest}{source}: {exc}", entry.line) from exc

    def _run(self, step: _Step, lower: list[Path], dest: Path) -> None:
        from posttrain.sandbox.bwrap_backend import BwrapSandbox  # needs bwrap and root only to build

        env = {"PIP_BREAK_SYSTEM_PACKAGES": "1", **step.env}  # pip into the host's Python, as into an image's
        spec = SandboxSpec(
            layers=lower,
            workdir=step.workdir,
            env=env,
            limits=self.limits,
            allow_network=step.network,
            system_writable=True,
        )
        sandbox = BwrapSandbox(spec, base_dir=self.sandbox_dir)
        try:
            argv = step.command if isinstance(step.command, list) else [*step.shell, step.command]
            result = sandbox.exec(argv, timeout=self.timeout_s, stdin=step.stdin)
            if not result.ok:
                raise step.fail(_failure(step, result, self.timeout_s))
            sandbox.export_layer(dest)
        finally:
            sandbox.close()


def _failure(step: _Step, result: ExecResult, timeout_s: float) -> str:
    what = "RUN" if step.describe and str(step.describe[0]).startswith("RUN") else "setup command"
    if result.timed_out:
        head = f"{what} timed out after {timeout_s:g} s (raise timeout_s)"
    elif result.oom_killed:
        head = f"{what} was killed for memory (exit {result.exit_code})"
    else:
        head = f"{what} failed with exit code {result.exit_code}"
    output = result.stderr.strip() or result.stdout.strip()
    tail = output.splitlines()[-_STDERR_TAIL_LINES:]
    message = f"{head}: {_short(step.describe)}"
    if tail:
        message += "\n" + "\n".join(f"  | {line}" for line in tail)
    if "Read-only file system" in output:
        message += f"\n  ({WRITABLE_TEXT})"
    return message


def _check_stack(stack: list[Path], fail: Callable[[str], SandboxError]) -> None:
    size = sum(len(str(p)) + 1 for p in stack)
    if size > _MAX_LOWERDIR_CHARS:
        raise fail(
            f"too many layers ({len(stack)}) for one overlay mount: combine RUN steps with && "
            "or use a shorter cache_dir"
        )


def _hash(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _short(describe) -> str:
    text = describe[0] if describe and isinstance(describe[0], str) else json.dumps(describe)
    if isinstance(describe, list) and describe and isinstance(describe[0], list):
        text = " / ".join(str(d[0]) for d in describe)
    text = " ".join(str(text).split())
    return text if len(text) <= 100 else text[:97] + "..."
