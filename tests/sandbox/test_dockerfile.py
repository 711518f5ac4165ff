"""Parsing Dockerfiles for the bwrap builder: no sandbox needed."""

import textwrap

import pytest

from posttrain.sandbox.base_image import HostInfo, stand_in
from posttrain.sandbox.dockerfile import DockerfileError, parse_dockerfile, read_dockerfile
from posttrain.sandbox.interface import SandboxError

HOST = HostInfo("debian", "12", "bookworm", "Debian GNU/Linux 12 (bookworm)", "3.11")


def parse(tmp_path, text, **kwargs):
    path = tmp_path / "env" / "Dockerfile"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return parse_dockerfile(path, host=HOST, **kwargs)


def error_of(tmp_path, text, **kwargs) -> DockerfileError:
    with pytest.raises(DockerfileError) as info:
        parse(tmp_path, text, **kwargs)
    assert isinstance(info.value, SandboxError)
    return info.value


def test_continuations_comments_and_line_numbers(tmp_path):
    df = parse(
        tmp_path,
        """
        # a comment
        FROM debian:bookworm
        RUN apt-get update \\
            # a comment inside the continuation is dropped
            && echo one \\

            && echo two
        WORKDIR /app
    """,
    )
    run, workdir = df.instructions
    assert run.keyword == "RUN" and run.line == 3
    assert run.command == "apt-get update     && echo one     && echo two"
    assert workdir.keyword == "WORKDIR" and workdir.line == 8
    assert df.base.ok and df.base.notes == []


def test_env_forms_and_substitution(tmp_path):
    df = parse(
        tmp_path,
        """
        FROM python:3.11-slim
        ENV A=1 B="two words" C=x\\ y
        ENV LEGACY some value here
        ENV A=2 OLD=$A NEW=${A}
        ENV PATH=/app/bin:$PATH EMPTY=${NOPE:-dflt} ALT=${A:+set}
        ENV SINGLE='$A stays'
    """,
    )
    assert df.env == {
        "A": "2",
        "B": "two words",
        "C": "x y",
        "LEGACY": "some value here",
        "OLD": "1",
        "NEW": "1",  # every pair of one ENV sees the values from before it, as in Docker
        "PATH": "/app/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "EMPTY": "dflt",
        "ALT": "set",
        "SINGLE": "$A stays",
    }


def test_arg_defaults_overrides_and_scope(tmp_path):
    text = """
        ARG BASE=3.11
        FROM python:${BASE}-slim
        ARG BASE
        ARG VERSION=1.0
        ARG NAME
        ENV APP_VERSION=$VERSION
        WORKDIR /app/v${VERSION}
        RUN echo "$VERSION" > out.txt
    """
    df = parse(tmp_path, text)
    assert df.base.image == "python:3.11-slim"
    assert df.env == {"APP_VERSION": "1.0"}  # ARGs do not reach the sandbox
    assert df.workdir == "/app/v1.0"
    run = df.instructions[-1]
    assert run.command == 'echo "$VERSION" > out.txt'  # the shell expands RUN, not the parser
    assert run.env == {"BASE": "3.11", "VERSION": "1.0", "APP_VERSION": "1.0"}
    assert run.workdir == "/app/v1.0"

    df = parse(tmp_path, text, build_args={"VERSION": "2.5", "NAME": "x"})
    assert df.env == {"APP_VERSION": "2.5"} and df.args["NAME"] == "x"


def test_json_run_shell_and_heredoc(tmp_path):
    df = parse(
        tmp_path,
        """
        FROM ubuntu:24.04
        RUN ["python3", "-c", "print(1)"]
        SHELL ["/bin/bash", "-o", "pipefail", "-c"]
        RUN echo $HOME | cat
        RUN <<EOF
        echo one
        echo two
        EOF
        RUN python3 <<'PY' > /app/x
        print("hi")
        PY
        WORKDIR /app
    """,
    )
    exec_form, shell_form, heredoc, feed, _ = df.instructions
    assert exec_form.command == ["python3", "-c", "print(1)"]
    assert shell_form.shell == ("/bin/bash", "-o", "pipefail", "-c")
    assert heredoc.command == "echo one\necho two\n"
    assert feed.command == "python3 <<'PY' > /app/x\nprint(\"hi\")\nPY\n"
    assert df.instructions[-1].line == 12
    assert any("Ubuntu" in note for note in df.base.notes)


def test_copy_forms(tmp_path):
    df = parse(
        tmp_path,
        """
        FROM python:3.11
        WORKDIR /app
        COPY a.txt ./
        COPY ["b c.txt", "d.txt", "/app/data/"]
        COPY --chown=1000:1000 --chmod=755 run.sh bin/run
        ADD *.tar.gz /tests/
        COPY <<EOF /app/conf.ini
        name=$HOSTNAME
        EOF
    """,
    )
    _, a, bc, run, add, heredoc = df.instructions
    assert (a.dest, a.dest_is_dir, [s.path for s in a.sources]) == ("/app", True, ["a.txt"])
    assert [s.path for s in bc.sources] == ["b c.txt", "d.txt"] and bc.dest == "/app/data"
    assert run.dest == "/app/bin/run" and not run.dest_is_dir and run.chmod == 0o755
    assert any("--chown=1000:1000 ignored" in note and ":5:" in note for note in df.notes)
    assert add.keyword == "ADD" and add.dest == "/tests"
    assert heredoc.sources[0].content == b"name=\n"


def test_ignored_instructions_are_noted(tmp_path):
    df = parse(
        tmp_path,
        """
        FROM debian:12
        LABEL a=b
        EXPOSE 8080
        USER nobody
        CMD ["bash"]
        ENTRYPOINT ["x"]
        VOLUME /data
        HEALTHCHECK CMD true
        STOPSIGNAL SIGTERM
        ONBUILD RUN true
    """,
    )
    assert df.instructions == []
    keywords = ["LABEL", "EXPOSE", "USER", "CMD", "ENTRYPOINT", "VOLUME", "HEALTHCHECK", "STOPSIGNAL", "ONBUILD"]
    for line, keyword in enumerate(keywords, start=2):
        assert any(f"Dockerfile:{line}: {keyword} ignored" in note for note in df.notes), keyword
    assert any("USER ignored" in note and "root" in note for note in df.notes)


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("FROM debian\nRUN true\nFROM debian\n", 3, ["second FROM", "line 1", "multi-stage"]),
        ("FROM debian\nCOPY --from=builder /x /app/\n", 2, ["--from=builder", "multi-stage"]),
        ("FROM debian\n\nRUN --mount=type=cache,target=/root/.cache pip install x\n", 3, ["--mount", "not supported"]),
        (
            "FROM debian\nADD https://example.com/f.tgz /app/\n",
            2,
            ["ADD https://example.com/f.tgz: needs the network at build time; download it in a RUN step"],
        ),
        ("FROM debian\nCOPY tool /srv/bin/\n", 2, ["/srv/bin", "only /app, /tmp, /tests, /logs, /root, /solution"]),
        ("FROM debian\nWORKDIR /srv/app\n", 2, ["WORKDIR /srv/app", "only /app"]),
        ("FROM debian\nFROBNICATE x\n", 2, ["unknown instruction FROBNICATE"]),
        ("FROM debian\nENV A=1 B\n", 2, ["ENV 'B'"]),
        ("FROM debian\nENV LONELY\n", 2, ["needs a value"]),
        ("FROM debian\nCOPY onlyone\n", 2, ["at least one source"]),
        ("RUN true\nFROM debian\n", 1, ["before FROM"]),
        ('FROM debian\nENV A="open\n', 2, ["unterminated"]),
        ("FROM debian\nRUN cat <<EOF\nno end\n", 2, ["heredoc <<EOF is not closed"]),
        ("FROM debian\nSHELL /bin/bash -c\n", 2, ["JSON form"]),
    ],
)
def test_bad_lines_name_path_and_line(tmp_path, text, line, words):
    error = error_of(tmp_path, text)
    assert str(error).startswith(f"{tmp_path / 'env' / 'Dockerfile'}:{line}: "), str(error)
    assert error.line == line
    for word in words:
        assert word in str(error)


def test_unsupported_base_images(tmp_path):
    error = error_of(tmp_path, "# base\nFROM node:20\nRUN true\n")
    assert str(error) == (
        f"{tmp_path / 'env' / 'Dockerfile'}:2: FROM node:20: the host cannot stand in for this image "
        "(bwrap runs on the host's /usr); use the docker backend or a debian/ubuntu/python base"
    )
    for image in (
        "alpine:3.19",
        "python:3.12-alpine",
        "golang:1.22",
        "nvidia/cuda:12.4.1-runtime-ubuntu22.04",
        "scratch",
        "rust:1-slim",
    ):
        assert "cannot stand in" in str(error_of(tmp_path, f"FROM {image}\n")), image
    assert not stand_in("node:20", HOST).ok
    assert parse(tmp_path, "FROM node:20\n", check_base=False).base.ok is False


def test_a_platform_flag_is_not_part_of_the_image(tmp_path):
    df = parse(tmp_path, "FROM --platform=linux/amd64 python:3.11-slim\nRUN true\n")
    assert df.images == ["python:3.11-slim"] and df.base.image == "python:3.11-slim"
    assert any("FROM --platform=linux/amd64 ignored" in note for note in df.notes)


def test_reading_notes_what_the_builder_refuses_and_keeps_every_stage(tmp_path):
    text = textwrap.dedent("""
        FROM golang:1.22 AS build
        RUN --mount=type=cache,target=/root/.cache go build -o /out/tool .
        FROM build AS test
        FROM debian:bookworm-slim
        COPY --from=build /out/tool /usr/local/bin/tool
        WORKDIR /srv/app
        ENV BASH_ENV=/srv/app/env.sh
        RUN pip install -r requirements.txt
    """).lstrip("\n")
    df = read_dockerfile(tmp_path / "Dockerfile", text=text, host=HOST)
    assert df.images == ["golang:1.22", "debian:bookworm-slim"]  # `FROM build` names a stage, not an image
    assert [(i.keyword, i.line) for i in df.instructions] == [("RUN", 2), ("COPY", 5), ("WORKDIR", 6), ("RUN", 8)]
    assert df.instructions[-1].command == "pip install -r requirements.txt"
    assert (df.workdir, df.env, df.stage) == ("/srv/app", {"BASH_ENV": "/srv/app/env.sh"}, None)
    for refused in ("2: RUN --mount", "3: a second FROM", "5: COPY --from=build", "6: WORKDIR /srv/app"):
        assert any(refused in note for note in df.notes), refused
    with pytest.raises(DockerfileError, match="2: RUN --mount"):  # the builder stops at the first
        parse_dockerfile(tmp_path / "Dockerfile", text=text, host=HOST, check_base=False)
    with pytest.raises(DockerfileError, match="unknown instruction FROBNICATE"):  # what Docker cannot read either
        read_dockerfile(tmp_path / "Dockerfile", text="FROM debian\nFROBNICATE x\n", host=HOST)
