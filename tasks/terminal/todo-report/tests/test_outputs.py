from pathlib import Path

EXPECTED = [
    ["file", "line", "tag", "text"],
    ["core/engine.c", "3", "TODO", "replace with a hash table"],
    ["core/engine.c", "5", "FIXME", "check negative keys"],
    ["core/engine.c", "10", "FIXME", "leaks on error path"],
    ["core/engine.h", "3", "TODO", "document the public API"],
    ["core/util.py", "2", "TODO", 'support reversed bounds"""'],
    ["main.py", "3", "TODO", "parse arguments with argparse"],
    ["main.py", "5", "FIXME", "handle missing file"],
    ["web/app.js", "2", "TODO", "escape HTML"],
    ["web/app.js", "5", "FIXME", "render() is slow for > 10k items"],
    ["web/static/app.min.js", "1", "TODO", "minified file, still a .js file"],
]


def test_report_exact():
    raw = Path("/app/todo.tsv").read_text()
    assert raw.endswith("\n")
    rows = [line.split("\t") for line in raw.rstrip("\n").split("\n")]
    assert rows == EXPECTED
