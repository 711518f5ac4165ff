"""Dates with GNU date (UTC): epoch seconds to and from ISO dates, weekdays, date arithmetic,
whole files of dates (date -f), files sorted or renamed by the dates in them."""

from __future__ import annotations

import datetime as dt
import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem, words

UTC = "All times are UTC."


def _day(rng: random.Random, start: int = 2015, end: int = 2027) -> dt.date:
    return dt.date(rng.randint(start, end), 1, 1) + dt.timedelta(days=rng.randint(0, 364))


def _moment(rng: random.Random) -> dt.datetime:
    day = _day(rng)
    return dt.datetime(day.year, day.month, day.day, rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))


def _epoch(moment: dt.datetime) -> int:
    return int(moment.replace(tzinfo=dt.UTC).timestamp())


def _one(layout: Layout, goal: str, out: str, expected: str, output: str, step: str) -> TaskParts:
    """A one-answer task with no input files."""
    checks = VerifierTests()
    checks.value(layout.path(out), expected)
    return TaskParts(Spec(goal=goal, output=output, notes=[UTC]), {}, checks.render(), [step])


def _lines_task(
    layout: Layout, rel: str, text: str, out: str, expected: list[str], spec: Spec, *steps: str
) -> TaskParts:
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path(out), expected)
    return TaskParts(spec, {rel: text}, checks.render(), list(steps))


# ---- difficulty 1: one command -------------------------------------------------------------


def epoch_to_iso(rng: random.Random, layout: Layout) -> TaskParts:
    moment = _moment(rng)
    return _one(
        layout,
        f"convert the Unix timestamp {_epoch(moment)} to a calendar date and write it to {layout.show('date.txt')}",
        "date.txt",
        moment.date().isoformat(),
        "the date as YYYY-MM-DD",
        f"date -u -d @{_epoch(moment)} +%F > {layout.sh('date.txt')}",
    )


def weekday(rng: random.Random, layout: Layout) -> TaskParts:
    day = _day(rng, 1990, 2035)
    return _one(
        layout,
        f"write the day of the week of {day.isoformat()} to {layout.show('weekday.txt')}",
        "weekday.txt",
        day.strftime("%A"),
        "the English weekday name with a capital first letter, e.g. Monday",
        f"date -u -d {day.isoformat()} +%A > {layout.sh('weekday.txt')}",
    )


def add_days(rng: random.Random, layout: Layout) -> TaskParts:
    day, n = _day(rng), rng.randint(20, 400)
    return _one(
        layout,
        f"write the date {n} days after {day.isoformat()} to {layout.show('due.txt')}",
        "due.txt",
        (day + dt.timedelta(days=n)).isoformat(),
        "the date as YYYY-MM-DD",
        f"date -u -d '{day.isoformat()} + {n} days' +%F > {layout.sh('due.txt')}",
    )


def iso_to_epoch(rng: random.Random, layout: Layout) -> TaskParts:
    moment = _moment(rng)
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    return _one(
        layout,
        f"write the Unix timestamp of {text} to {layout.show('epoch.txt')}",
        "epoch.txt",
        str(_epoch(moment)),
        "just the number of seconds since 1970-01-01 00:00:00 UTC",
        f"date -u -d '{text}' +%s > {layout.sh('epoch.txt')}",
    )


# ---- difficulty 2: up to two steps -----------------------------------------------------------


def days_between(rng: random.Random, layout: Layout) -> TaskParts:
    first = _day(rng)
    second = first + dt.timedelta(days=rng.randint(30, 2000))
    a, b = first.isoformat(), second.isoformat()
    return _one(
        layout,
        f"write how many days lie between {a} and {b} to {layout.show('days.txt')}",
        "days.txt",
        str((second - first).days),
        f"just the integer: the number of days you add to {a} to reach {b}",
        f"echo $(( ($(date -u -d {b} +%s) - $(date -u -d {a} +%s)) / 86400 )) > {layout.sh('days.txt')}",
    )


def epochs_file(rng: random.Random, layout: Layout) -> TaskParts:
    moments = [_moment(rng) for _ in range(rng.randint(5, 10))]
    rel = f"{layout.folder('data', 'raw data')}/{stem(rng)}.epoch"
    text = "".join(f"{_epoch(m)}\n" for m in moments)
    spec = Spec(
        goal=f"convert every timestamp of {layout.show(rel)} to a date and write the dates to "
        f"{layout.show('dates.txt')}",
        inputs=[f"{layout.show(rel)} holds one Unix timestamp (seconds) per line"],
        output="one YYYY-MM-DD date per line, in the same order",
        notes=[UTC],
    )
    return _lines_task(
        layout,
        rel,
        text,
        "dates.txt",
        [m.date().isoformat() for m in moments],
        spec,
        f"sed 's/^/@/' {layout.sh(rel)} | date -u -f - +%F > {layout.sh('dates.txt')}",
    )


def weekend_count(rng: random.Random, layout: Layout) -> TaskParts:
    days = [_day(rng) for _ in range(rng.randint(8, 15))]
    if not any(d.weekday() >= 5 for d in days):
        days[0] += dt.timedelta(days=5 - days[0].weekday())
    rel = f"{layout.folder('calendar', 'team calendar')}/events.txt"
    text = "".join(f"{d.isoformat()}\n" for d in days)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.value(layout.path("weekend.txt"), str(sum(d.weekday() >= 5 for d in days)))
    spec = Spec(
        goal=f"count the dates in {layout.show(rel)} that fall on a Saturday or Sunday and write the count to "
        f"{layout.show('weekend.txt')}",
        inputs=[f"{layout.show(rel)} holds one YYYY-MM-DD date per line"],
        output="just the integer",
    )
    step = f"date -u -f {layout.sh(rel)} +%u | awk '$1 > 5' | wc -l > {layout.sh('weekend.txt')}"
    return TaskParts(spec, {rel: text}, checks.render(), [step])


def us_to_iso(rng: random.Random, layout: Layout) -> TaskParts:
    days = [_day(rng) for _ in range(rng.randint(5, 10))]
    rel = f"{layout.folder('imports', 'bank imports')}/{stem(rng)}.txt"
    text = "".join(d.strftime("%m/%d/%Y") + "\n" for d in days)
    spec = Spec(
        goal=f"rewrite the dates of {layout.show(rel)} in ISO form into {layout.show('iso_dates.txt')}",
        inputs=[f"{layout.show(rel)} holds one US-style date (MM/DD/YYYY) per line"],
        output="one YYYY-MM-DD date per line, in the same order",
    )
    return _lines_task(
        layout,
        rel,
        text,
        "iso_dates.txt",
        [d.isoformat() for d in days],
        spec,
        f"date -u -f {layout.sh(rel)} +%F > {layout.sh('iso_dates.txt')}",
    )


# ---- difficulty 3: a header line, a folder that does not exist yet, files to leave alone ------


def move_by_month(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("reports", "daily reports")
    days = sorted({_day(rng, 2022, 2024) for _ in range(rng.randint(4, 7))})
    prefix = rng.choice(("report", "sales", "backup"))
    files = {f"{folder}/{prefix}_{d.strftime('%Y%m%d')}.txt": f"{prefix} for {d}\n" for d in days}
    other = f"{folder}/{prefix}_notes.txt"
    files[other] = "no date in this name\n"
    checks = VerifierTests()
    months = sorted({d.strftime("%Y-%m") for d in days})
    expected = sorted([*months, other.rsplit("/")[-1]])
    checks.add("months", f"assert sorted(os.listdir({layout.path(folder)!r})) == {expected!r}")
    for d in days:
        name = f"{prefix}_{d.strftime('%Y%m%d')}.txt"
        checks.unchanged(layout.path(f"{folder}/{d.strftime('%Y-%m')}/{name}"), files[f"{folder}/{name}"])
    checks.unchanged(layout.path(other), files[other])
    loop = (
        f'for f in {prefix}_[0-9]*.txt; do d=${{f#{prefix}_}}; m=$(date -u -d "${{d%.txt}}" +%Y-%m); '
        'mkdir -p "$m" && mv "$f" "$m/"; done'
    )
    return TaskParts(
        Spec(
            goal=f"move every dated file of {layout.show(folder)} into a subfolder named after its month, YYYY-MM, "
            "inside that folder",
            inputs=[f"The dated files are named {prefix}_YYYYMMDD.txt"],
            notes=["The month folders do not exist yet.", f"Leave {prefix}_notes.txt where it is."],
        ),
        files,
        checks.render(),
        [f"cd {layout.sh(folder)} && {loop}"],
    )


def sort_events(rng: random.Random, layout: Layout) -> TaskParts:
    moments = sorted({_moment(rng) for _ in range(rng.randint(6, 10))})
    events = dict(zip(moments, (f"{p} {w}" for p, w in zip(people(rng, 6) * 2, words(rng, 10)))))
    shuffled = rng.sample(moments, len(moments))
    rel = f"{layout.folder('logs', 'audit logs')}/events.txt"
    text = "epoch user action\n" + "".join(f"{_epoch(m)} {events[m]}\n" for m in shuffled)
    expected = [f"{m.strftime('%Y-%m-%d %H:%M:%S')} {events[m]}" for m in moments]
    loop = "while read s rest; do echo \"$(date -u -d @$s '+%F %T') $rest\"; done"
    spec = Spec(
        goal=f"write the events of {layout.show(rel)} in time order to {layout.show('timeline.txt')}, each with "
        "its timestamp as a readable date and time",
        inputs=[f"{layout.show(rel)} has a header line, then lines 'epoch user action' with epoch in Unix seconds"],
        output="lines 'YYYY-MM-DD HH:MM:SS user action', oldest first, no header",
        notes=[UTC],
    )
    return _lines_task(
        layout,
        rel,
        text,
        "timeline.txt",
        expected,
        spec,
        f"tail -n +2 {layout.sh(rel)} | sort -n | {loop} > {layout.sh('timeline.txt')}",
    )


def days_left(rng: random.Random, layout: Layout) -> TaskParts:
    today = _day(rng, 2023, 2025)
    tasks = words(rng, rng.randint(4, 7))
    due = {t: today + dt.timedelta(days=rng.randint(1, 200)) for t in tasks}
    rel = f"{layout.folder('plan', 'project plan')}/tasks.csv"
    text = "task,due\n" + "".join(f"{t},{due[t].isoformat()}\n" for t in tasks)
    ref = today.isoformat()
    loop = f'while IFS=, read t d; do echo "$t $(( ($(date -u -d $d +%s) - $(date -u -d {ref} +%s)) / 86400 ))"; done'
    spec = Spec(
        goal=f"write, for each task in {layout.show(rel)}, how many days after {ref} it is due to "
        f"{layout.show('days_left.txt')}",
        inputs=[f"{layout.show(rel)} is a CSV file with the header line task,due (due as YYYY-MM-DD)"],
        output="one line 'task days' per task, in file order",
    )
    return _lines_task(
        layout,
        rel,
        text,
        "days_left.txt",
        [f"{t} {(due[t] - today).days}" for t in tasks],
        spec,
        f"tail -n +2 {layout.sh(rel)} | {loop} > {layout.sh('days_left.txt')}",
    )


def recent_entries(rng: random.Random, layout: Layout) -> TaskParts:
    today, window = _day(rng, 2023, 2025), rng.randint(7, 30)
    days = sorted(today - dt.timedelta(days=rng.randint(0, 3 * window)) for _ in range(rng.randint(8, 14)))
    days = sorted([*days[1:], today - dt.timedelta(days=rng.randint(0, window - 1))])  # one line is recent
    rel = f"{layout.folder('journal', 'lab journal')}/entries.log"
    lines = [f"{d.isoformat()} {rng.choice(words(rng, 3))} {rng.randint(1, 99)}" for d in days]
    text = "".join(line + "\n" for line in lines)
    cutoff = today - dt.timedelta(days=window)
    out = f"recent/{today.strftime('%Y-%m')}/entries.log"
    spec = Spec(
        goal=f"copy the lines of {layout.show(rel)} dated within the {window} days up to {today.isoformat()} "
        f"(from {window} days before it, inclusive) into {layout.show(out)}",
        inputs=[f"Each line of {layout.show(rel)} starts with a YYYY-MM-DD date; the lines are in date order"],
        output="those lines unchanged, in order",
        notes=[f"The folder of {layout.show(out)} does not exist yet."],
    )
    return _lines_task(
        layout,
        rel,
        text,
        out,
        [line for line, d in zip(lines, days) if d >= cutoff],
        spec,
        f"mkdir -p {layout.sh(out.rsplit('/', 1)[0])}",
        f"awk -v c=$(date -u -d '{today.isoformat()} - {window} days' +%F) '$1 >= c' {layout.sh(rel)} > "
        f"{layout.sh(out)}",
    )


FAMILY = Family(
    name="dates",
    skill="convert, compare and compute dates with GNU date (-d, -f, +FORMAT)",
    templates={
        1: (
            Template("epoch-to-iso", "a Unix timestamp as a date", epoch_to_iso),
            Template("weekday", "the weekday of a date", weekday),
            Template("add-days", "the date n days later", add_days),
            Template("iso-to-epoch", "a date and time as a Unix timestamp", iso_to_epoch),
        ),
        2: (
            Template("days-between", "the days between two dates", days_between),
            Template("epochs-file", "a file of timestamps to dates (date -f)", epochs_file),
            Template("weekend-count", "count the dates that fall on a weekend", weekend_count),
            Template("us-to-iso", "US dates to ISO dates", us_to_iso),
        ),
        3: (
            Template("move-by-month", "move dated files into month folders, one undated file stays", move_by_month),
            Template("sort-events", "timestamped lines with a header, sorted and made readable", sort_events),
            Template("days-left", "days until each due date of a CSV with a header", days_left),
            Template("recent-entries", "the lines of the last n days into a new folder", recent_entries),
        ),
    },
)
