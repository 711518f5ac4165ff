from pathlib import Path


def test_line_count_exact():
    expected = Path("/app/data/access.log").read_bytes().count(b"\n")
    assert expected == 1337  # the log must not have been modified
    text = Path("/app/line_count.txt").read_text()
    assert text.strip() == "1337"
    assert text in ("1337\n", "1337")
