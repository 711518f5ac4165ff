"""Building environments into cached layers, checked through real bwrap sandboxes."""

import os
import shutil
import tarfile
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from posttrain.sandbox.dockerfile import DockerfileError
from posttrain.sandbox.environment_builder import build_environment
from posttrain.sandbox.interface import SandboxError
from posttrain.tasks.records import Environment

# as in conftest.py (not importable under --import-mode=importlib)
BWRAP_MISSING = (shutil.which("bwrap") is None or os.geteuid() != 0) and (
    "the bwrap backend needs bubblewrap (make setup installs it) and root"
)
needs_bwrap = pytest.mark.skipif(bool(BWRAP_MISSING), reason=BWRAP_MISSING or "")

HARBOR_DOCKERFILE = """\
FROM python:3.11-slim
WORKDIR /app
ENV GREETING=hi
COPY data.txt ./
RUN echo "$GREETING" > /app/out.txt && mkdir -p /app/sub
"""


@pytest.fixture
def env_dir(tmp_path):
    """A Harbor task's environment/ directory."""
    env = tmp_path / "task" / "environment"
    env.mkdir(parents=True)
    (env / "data.txt").write_text("payload\n")
    (env / "Dockerfile").write_text(HARBOR_DOCKERFILE)
    return env


@pytest.fixture
def build(tmp_path, sandbox_base):
    cache = tmp_path / "cache"

    def run(source, **kwargs):
        return build_environment(source, cache, sandbox_dir=sandbox_base, **kwargs)

    run.cache = cache
    return run


@pytest.fixture
def open_sandbox(sandbox_base):
    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    made = []

    def make(built):
        sandbox = BwrapSandbox(built.spec(), base_dir=sandbox_base)
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()


def layer_mtimes(built):
    return [os.stat(layer).st_mtime_ns for layer in built.layers]


@needs_bwrap
def test_harbor_environment_builds_caches_and_rebuilds_from_an_edited_line(env_dir, build, open_sandbox):
    first = build(env_dir.parent)  # the task directory: its environment/ is found
    assert first.workdir == "/app" and first.env == {"GREETING": "hi"}
    assert len(first.layers) == 2 and first.steps_run == 2 and first.cache_hits == 0
    assert any("python" in note for note in first.notes)

    sandbox = open_sandbox(first)
    result = sandbox.exec('pwd; echo "$GREETING"; cat /app/data.txt /app/out.txt; test -d /app/sub && echo dir')
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split("\n") == ["/app", "hi", "payload", "hi", "dir", ""]

    # the same environment again: every layer from the cache, nothing run or written
    mtimes = layer_mtimes(first)
    second = build(env_dir)
    assert second.layers == first.layers and second.key == first.key
    assert (second.steps_run, second.cache_hits) == (0, 2)
    assert all(line.startswith("hit ") for line in second.log)
    assert layer_mtimes(second) == mtimes

    # an edited RUN line rebuilds that line only; the files layer stays
    (env_dir / "Dockerfile").write_text(HARBOR_DOCKERFILE.replace('"$GREETING"', '"$GREETING again"'))
    third = build(env_dir)
    assert third.layers[0] == first.layers[0] and third.layers[1] != first.layers[1]
    assert (third.steps_run, third.cache_hits) == (1, 1)
    assert open_sandbox(third).read_file("/app/out.txt") == b"hi again\n"

    # an edited copied file changes the files layer's key, and so every layer above it
    (env_dir / "data.txt").write_text("changed\n")
    fourth = build(env_dir)
    assert (fourth.steps_run, fourth.cache_hits) == (2, 0)
    assert open_sandbox(fourth).read_file("/app/data.txt") == b"changed\n"


@needs_bwrap
def test_a_failing_run_names_its_line_and_leaves_no_layer(env_dir, build):
    (env_dir / "Dockerfile").write_text(HARBOR_DOCKERFILE + 'RUN echo "boom: no such thing" >&2; exit 3\n')
    with pytest.raises(DockerfileError) as info:
        build(env_dir)
    message = str(info.value)
    assert message.startswith(f"{env_dir / 'Dockerfile'}:6: RUN failed with exit code 3")
    assert "boom: no such thing" in message
    layers = [p for p in (build.cache / "layers").iterdir() if p.is_dir()]
    assert len(layers) == 2  # the two good steps are cached; the failed one is not
    assert list((build.cache / "staging").iterdir()) == []

    (env_dir / "Dockerfile").write_text(HARBOR_DOCKERFILE + "RUN sleep 30\n")
    with pytest.raises(DockerfileError, match=r"Dockerfile:6: RUN timed out after 1 s"):
        build(env_dir, timeout_s=1)
    assert list((build.cache / "staging").iterdir()) == []


@needs_bwrap
def test_run_deleting_a_copied_file_removes_it_in_the_sandbox(tmp_path, build, open_sandbox):
    env = tmp_path / "env"
    (env / "conf").mkdir(parents=True)
    (env / "a.txt").write_text("a\n")
    (env / "b.txt").write_text("b\n")
    (env / "conf" / "x.ini").write_text("x=1\n")
    (env / "Dockerfile").write_text(
        textwrap.dedent("""\
        FROM debian:bookworm
        WORKDIR /app
        COPY a.txt b.txt /app/
        COPY conf /app/conf
        RUN rm /app/a.txt && rm -r /app/conf && mkdir /app/conf && echo y=2 > /app/conf/y.ini
    """)
    )
    built = build(env)
    result = open_sandbox(built).exec("ls -A /app /app/conf")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == ["/app:", "b.txt", "conf", "/app/conf:", "y.ini"]


@needs_bwrap
def test_environment_record(build, open_sandbox):
    record = Environment(
        files={"main.py": "print('hello')\n", "/tests/check.sh": "#!/bin/sh\necho ok\n"},
        setup=["python3 main.py > setup.txt", "echo $MODE >> setup.txt"],
        workdir="/app/project",
        env={"MODE": "test"},
        allow_network=False,
    )
    built = build(record)
    assert built.workdir == "/app/project" and built.env == {"MODE": "test"} and not built.allow_network
    assert built.steps_run == 3
    result = open_sandbox(built).exec("pwd; cat setup.txt; /tests/check.sh; echo $MODE")
    assert result.stdout.split() == ["/app/project", "hello", "test", "ok", "test"], result.stderr
    again = build(record)
    assert again.layers == built.layers and again.steps_run == 0

    with pytest.raises(SandboxError, match=r"environment setup\[1\]: setup command failed with exit code 1"):
        build(Environment(setup=["false"]))
    with pytest.raises(SandboxError, match="only /app, /tmp, /tests, /logs, /root, /solution and"):
        build(Environment(files={"/srv/tool": "x"}))
    # system directories are writable through overlays over the host's: a file in /usr/local/bin
    tool = build(Environment(files={"/usr/local/bin/tool": "#!/bin/sh\necho tool ran\n"}))
    assert tool.system_writable and not built.system_writable
    assert open_sandbox(tool).exec("tool; ls /usr/bin/python3").stdout.split() == ["tool", "ran", "/usr/bin/python3"]


@needs_bwrap
def test_concurrent_builds_of_one_environment_build_each_layer_once(env_dir, build):
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: build(env_dir), range(2)))
    assert results[0].layers == results[1].layers
    assert sorted(r.steps_run for r in results) in ([0, 2], [1, 1])  # each layer built once
    assert sum(r.steps_run for r in results) == 2


def test_copy_semantics_globs_archives_and_dockerignore(tmp_path, build):
    """Files-only builds write layers on the host: no sandbox needed to check them."""
    env = tmp_path / "env"
    (env / "src" / "pkg").mkdir(parents=True)
    (env / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (env / "src" / "secret.key").write_text("no\n")
    (env / "one.txt").write_text("1\n")
    (env / "two.txt").write_text("2\n")
    (env / "tool.sh").write_text("#!/bin/sh\n")
    (env / "bundle").mkdir()
    (env / "bundle" / "inside.txt").write_text("in\n")
    with tarfile.open(env / "bundle.tar.gz", "w:gz") as archive:
        archive.add(env / "bundle", arcname="bundle")
    (env / ".dockerignore").write_text("**/*.key\n")
    (env / "Dockerfile").write_text(
        textwrap.dedent("""\
        FROM debian:bookworm
        WORKDIR /app
        COPY src/ ./src/
        COPY *.txt /app/texts/
        COPY --chmod=755 tool.sh bin/tool
        ADD bundle.tar.gz /app/
        COPY bundle.tar.gz /tests/
        COPY <<EOF /app/settings.ini
        workdir=$HOME
        EOF
    """)
    )
    built = build(env)
    assert len(built.layers) == 1 and built.steps_run == 1
    layer = built.layers[0]
    assert (layer / "app/src/pkg/mod.py").read_text() == "x = 1\n"
    assert not (layer / "app/src/secret.key").exists()
    assert sorted(p.name for p in (layer / "app/texts").iterdir()) == ["one.txt", "two.txt"]
    assert (layer / "app/bin/tool").stat().st_mode & 0o777 == 0o755
    assert (layer / "app/bundle/inside.txt").read_text() == "in\n"  # ADD extracts a local archive
    assert (layer / "tests/bundle.tar.gz").is_file()  # COPY does not
    assert (layer / "app/settings.ini").read_text() == "workdir=\n"

    (env / "Dockerfile").write_text("FROM debian:bookworm\nCOPY ../outside /app/\n")
    with pytest.raises(DockerfileError, match=r"Dockerfile:2: COPY \.\./outside: outside the build context"):
        build(env)
    (env / "Dockerfile").write_text("FROM debian:bookworm\nWORKDIR /app\nCOPY missing.txt ./\n")
    with pytest.raises(DockerfileError, match=r"Dockerfile:3: COPY missing.txt: not found in the build context"):
        build(env)
    (env / "Dockerfile").write_text("FROM debian:bookworm\nCOPY one.txt two.txt /app/both\n")
    with pytest.raises(DockerfileError, match=r"Dockerfile:2: .*destination directory ending in /"):
        build(env)


def test_unsupported_base_image_is_refused_before_building(tmp_path, build):
    env = tmp_path / "env"
    env.mkdir()
    (env / "Dockerfile").write_text("FROM node:20\nRUN npm install\n")
    with pytest.raises(DockerfileError) as info:
        build(env)
    assert str(info.value) == (
        f"{env / 'Dockerfile'}:1: FROM node:20: the host cannot stand in for this image (bwrap runs on the "
        "host's /usr); use the docker backend or a debian/ubuntu/python base"
    )
    with pytest.raises(SandboxError, match="no such environment directory"):
        build(tmp_path / "nothing-here")
