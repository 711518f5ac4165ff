"""The static lint reads a Dockerfile as the parser does, not line by line."""

import textwrap

from posttrain.quality import lint
from posttrain.quality.dockerfiles import parsed_dockerfile
from posttrain.tasks.records import Task


def dockerfile(tmp_path, text):
    path = tmp_path / "Dockerfile"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return parsed_dockerfile(path)


def test_a_platform_flag_before_a_tagged_image_is_pinned(tmp_path):
    assert lint.unpinned(dockerfile(tmp_path, "FROM --platform=linux/amd64 python:3.11-slim\n"), "") == []
    loose = dockerfile(tmp_path, "FROM --platform=linux/amd64 python AS base\nFROM base\nFROM debian:latest\n")
    # a FROM that names an earlier stage pulls no image
    assert lint.unpinned(loose, "") == ["FROM python: no tag (or :latest)", "FROM debian:latest: no tag (or :latest)"]


def test_a_requirements_file_is_not_an_unpinned_package(tmp_path):
    df = dockerfile(
        tmp_path,
        """
        FROM python:3.11-slim
        RUN pip install --no-cache-dir -r requirements.txt \\
            && pip install -c constraints.txt flask==3.0.0 requests
    """,
    )
    assert lint.unpinned(df, "pip install -r /tests/requirements.txt pytest\n") == [
        "Dockerfile: requests has no pinned version",
        "tests/test.sh: pytest has no pinned version",
    ]


def test_only_copies_of_the_tests_or_solution_are_flagged(tmp_path):
    df = dockerfile(
        tmp_path,
        """
        FROM debian:bookworm-slim
        # COPY tests/ /tests/ in a comment is no copy
        COPY app/ /app/
        COPY --chmod=755 tests/ /tests/
        RUN echo "COPY solution/ /app/" > /app/notes.txt
    """,
    )
    task = Task(
        id="t",
        domain="d",
        instruction="x",
        kind="terminal",
        verifier="harbor",
        metadata={"tests_dir": str(tmp_path / "no-tests")},
    )
    assert lint.tests_in_image(task, None, df) == ["Dockerfile: COPY --chmod=755 tests/ /tests/"]
