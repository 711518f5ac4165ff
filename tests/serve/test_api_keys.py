"""API keys (files, the constant-time match), the warning for an exposed server without keys,
and the refusal log that does not flood."""

import logging

import pytest

from posttrain.errors import PosttrainError
from posttrain.serve.api_keys import ApiKeys, exposure_warning, read_key_file
from posttrain.serve.refusals import Refusals


def test_a_key_file_holds_one_key_a_line_with_comment_lines(tmp_path):
    path = tmp_path / "keys"
    path.write_text("# team keys\nalpha-1\n\n   beta#2  \n# old: gamma\n")
    assert read_key_file(path) == ["alpha-1", "beta#2"]


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "no such file"),
        ("", "holds no key"),
        ("# only a comment\n\n", "holds no key"),
        ("good\ntwo words\n", "line 2: a key cannot contain spaces"),
        (b"\xff\xfe", "cannot read it"),
    ],
)
def test_a_bad_key_file_is_one_error_naming_it(tmp_path, text, message):
    path = tmp_path / "keys.txt"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    with pytest.raises(PosttrainError) as error:
        read_key_file(path)
    assert str(error.value).startswith(f"--api-key-file {path}") and message in str(error.value)
    assert "\n" not in str(error.value)


def test_only_a_bearer_header_with_a_known_key_matches():
    keys = ApiKeys(["alpha", "beta", "alpha"])
    assert keys and not ApiKeys([])
    assert keys.match("Bearer alpha") == "alpha" and keys.match("bearer beta") == "beta"
    for header in (None, "", "Bearer", "Bearer alph", "Bearer alphaa", "Basic alpha", "alpha", "Bearer gamma"):
        assert keys.match(header) is None


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_hosts_need_no_key(host):
    assert exposure_warning(host, has_keys=False) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "myhost.example"])
def test_other_hosts_without_a_key_get_one_warning_line(host):
    line = exposure_warning(host, has_keys=False)
    assert line.startswith(f"--host {host}: listening beyond this machine without an API key") and "\n" not in line
    assert exposure_warning(host, has_keys=True) is None


def test_refusals_are_counted_each_and_logged_once_per_interval_a_reason(caplog):
    now = [0.0]
    refusals = Refusals(clock=lambda: now[0], interval_s=60.0)
    with caplog.at_level(logging.WARNING, logger="posttrain.serve.refusals"):
        lines = [refusals.refuse("missing_api_key", "/v1/models", "10.0.0.1") for _ in range(50)]
        lines.append(refusals.refuse("rate_limited", "/v1/models", "10.0.0.2"))
        now[0] = 61.0
        lines.append(refusals.refuse("missing_api_key", "/v1/models", "10.0.0.3"))
    written = [line for line in lines if line]
    assert [r.getMessage() for r in caplog.records] == written and len(written) == 3
    assert "401 missing_api_key" in written[0] and "10.0.0.1" in written[0]
    assert "429 rate_limited" in written[1]
    assert written[2].startswith("serve: 50 requests refused (401 missing_api_key) in the last 61 s")
    assert refusals.counts == {"missing_api_key": 51, "rate_limited": 1}
    rendered = refusals.render("p_")
    assert 'p_refused_total{reason="missing_api_key"} 51' in rendered
    assert 'p_refused_total{reason="wrong_api_key"} 0' in rendered
