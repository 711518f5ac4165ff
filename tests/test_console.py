"""The console's faces as a log or a pipe sees them: progress bars draw no frames where stderr is
not a terminal (not even when FORCE_COLOR makes rich take the pipe for one), and tables cut no
name short at 80 columns."""

from tests.cli.test_failed_start import run_cli

CURSOR_CONTROL = ("\r", "\x1b[?25l", "\x1b[2K", "\x1b[1A")  # what a redrawn frame is made of


def test_a_progress_bar_prints_no_frames_into_a_pipe(tmp_path):
    for forced in ({}, {"FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "1"}):
        out = tmp_path / "-".join(forced) / "tasks"
        done = run_cli("tasks", "generate", "git", "--count", "3", "--out", out, COLUMNS="80", **forced)
        assert done.returncode == 0, done.stderr
        assert not [c for c in CURSOR_CONTROL if c in done.stderr], (forced, done.stderr)
        assert "━" not in done.stderr, (forced, done.stderr)  # no bar, not even a final frame
        assert len(list(out.iterdir())) == 3


def test_a_table_in_a_pipe_keeps_every_name_whole():
    from posttrain.tasks.terminal_gen import FAMILIES

    done = run_cli("tasks", "families", COLUMNS="80")
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    names = {t.slug for family in FAMILIES.values() for d in (1, 2, 3) for t in family.templates[d]}
    cells = {cell.strip() for line in done.stdout.splitlines() for cell in line.split("│")}
    assert names - cells == set()
    assert {family.name for family in FAMILIES.values()} - cells == set()
