"""Text processing with grep, cut, sort, uniq and awk over a generated log or table."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem, words

LEVELS = ("INFO", "WARN", "ERROR")
LOG_FORMAT = "date level user word number, separated by single spaces"


def _log(rng: random.Random) -> list[str]:
    users = people(rng, 5)
    lines = []
    for i in range(rng.randint(25, 45)):
        level = rng.choices(LEVELS, weights=(5, 2, 2))[0]
        lines.append(
            f"2024-03-{1 + i // 10:02d} {level} {rng.choice(users)} {rng.choice(words(rng, 1))} {rng.randint(1, 500)}"
        )
    if not any(" ERROR " in line for line in lines):
        lines[rng.randrange(len(lines))] = f"2024-03-01 ERROR {users[0]} disk 1"
    for level, user, word in (("WARN", users[1], "cpu"), ("INFO", users[2], "io")):
        present = [line.split()[1] for line in lines]
        if level not in present:  # every level occurs, so grep -c never counts 0; replace a repeated one
            spare = next(i for i, lv in enumerate(present) if present.count(lv) > 1)
            lines[spare] = f"{lines[spare].split()[0]} {level} {user} {word} {rng.randint(1, 500)}"
    return lines


def _log_input(rng: random.Random, layout: Layout) -> tuple[str, list[str], str, VerifierTests]:
    """(the log's path under the root, its lines, its text, checks that it is left unchanged)."""
    rel = f"{layout.folder('data', 'input data')}/{stem(rng)}.log"
    log = _log(rng)
    text = "".join(line + "\n" for line in log)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    return rel, log, text, checks


# ---- difficulty 1: one command -------------------------------------------------------------


def grep_level(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, text, checks = _log_input(rng, layout)
    level = rng.choice(("ERROR", "WARN"))
    out = f"{level.lower()}s.txt"
    checks.lines(layout.path(out), [line for line in log if f" {level} " in line])
    spec = Spec(
        goal=f"write every line of {layout.show(rel)} that contains {level} to {layout.show(out)}",
        output="the lines in their original order",
    )
    return TaskParts(spec, {rel: text}, checks.render(), [f"grep {level} {layout.sh(rel)} > {layout.sh(out)}"])


def count_level(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, text, checks = _log_input(rng, layout)
    level = rng.choice(LEVELS)
    out = f"{level.lower()}_count.txt"
    checks.value(layout.path(out), str(sum(1 for line in log if line.split()[1] == level)))
    spec = Spec(
        goal=f"count the lines of {layout.show(rel)} whose level is {level} and write the count to {layout.show(out)}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="just the integer",
    )
    return TaskParts(spec, {rel: text}, checks.render(), [f"grep -c ' {level} ' {layout.sh(rel)} > {layout.sh(out)}"])


def first_lines(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, text, checks = _log_input(rng, layout)
    n = rng.randint(3, 12)
    out = f"first_{n}.txt"
    checks.lines(layout.path(out), log[:n])
    spec = Spec(
        goal=f"write the first {n} lines of {layout.show(rel)} to {layout.show(out)}",
        output="those lines, unchanged and in order",
    )
    return TaskParts(spec, {rel: text}, checks.render(), [f"head -n {n} {layout.sh(rel)} > {layout.sh(out)}"])


def drop_level(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, text, checks = _log_input(rng, layout)
    out = "no_info.txt"
    checks.lines(layout.path(out), [line for line in log if " INFO " not in line])
    spec = Spec(
        goal=f"write the lines of {layout.show(rel)} that are not INFO lines to {layout.show(out)}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="the remaining lines in their original order",
    )
    return TaskParts(spec, {rel: text}, checks.render(), [f"grep -v ' INFO ' {layout.sh(rel)} > {layout.sh(out)}"])


# ---- difficulty 2: a short pipeline --------------------------------------------------------


def error_users(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, text, checks = _log_input(rng, layout)
    checks.lines(layout.path("users.txt"), sorted({line.split()[2] for line in log if " ERROR " in line}))
    spec = Spec(
        goal=f"write the distinct users that have an ERROR line to {layout.show('users.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="one user per line, sorted alphabetically",
    )
    return TaskParts(
        spec,
        {rel: text},
        checks.render(),
        [f"grep ' ERROR ' {layout.sh(rel)} | cut -d' ' -f3 | sort -u > {layout.sh('users.txt')}"],
    )


def lines_per_user(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, text, checks = _log_input(rng, layout)
    counts: dict[str, int] = {}
    for line in log:
        counts[line.split()[2]] = counts.get(line.split()[2], 0) + 1
    checks.lines(layout.path("per_user.txt"), [f"{u} {c}" for u, c in sorted(counts.items())])
    spec = Spec(
        goal=f"count how many lines each user has in {layout.show(rel)} and write the counts to "
        f"{layout.show('per_user.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="one line per user, 'user count' (a single space between), sorted by user",
    )
    return TaskParts(
        spec,
        {rel: text},
        checks.render(),
        [f"cut -d' ' -f3 {layout.sh(rel)} | sort | uniq -c | awk '{{print $2, $1}}' > {layout.sh('per_user.txt')}"],
    )


def largest_number(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, _, _ = _log_input(rng, layout)
    top = rng.randrange(len(log))
    fields = log[top].split()
    log[top] = " ".join([*fields[:4], str(501 + rng.randint(0, 98))])  # one line holds the largest number
    text = "".join(line + "\n" for line in log)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("largest.txt"), [log[top]])
    spec = Spec(
        goal=f"find the line of {layout.show(rel)} with the largest number and write it to "
        f"{layout.show('largest.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}; the number is the last field"],
        output="that one line, unchanged",
    )
    return TaskParts(
        spec, {rel: text}, checks.render(), [f"sort -k5,5n {layout.sh(rel)} | tail -n 1 > {layout.sh('largest.txt')}"]
    )


def user_total(rng: random.Random, layout: Layout) -> TaskParts:
    rel, log, text, checks = _log_input(rng, layout)
    user = rng.choice(log).split()[2]
    checks.value(layout.path("total.txt"), str(sum(int(line.split()[4]) for line in log if line.split()[2] == user)))
    spec = Spec(
        goal=f"add up the numbers of every line of {layout.show(rel)} whose user is {user}, and write the sum "
        f"to {layout.show('total.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="just the integer",
    )
    return TaskParts(
        spec,
        {rel: text},
        checks.render(),
        [f"awk '$3==\"{user}\" {{s+=$5}} END {{print s+0}}' {layout.sh(rel)} > {layout.sh('total.txt')}"],
    )


# ---- difficulty 3: a table with a header, keys that contain one another -------------------


def _sales(rng: random.Random) -> tuple[str, list[tuple[str, int]], list[str]]:
    base = rng.choice(("north", "south", "east", "west"))
    regions = [base, f"{base}east" if base in ("north", "south") else f"{base}ern", rng.choice(("central", "coast"))]
    rows = [(rng.choice(regions), rng.randint(5, 400)) for _ in range(rng.randint(15, 30))]
    if not any(r == base for r, _ in rows):
        rows[0] = (base, rows[0][1])
    return base, rows, regions


def _sales_text(rows: list[tuple[str, int]]) -> str:
    return "id\tregion\tamount\n" + "".join(f"{i + 1}\t{r}\t{a}\n" for i, (r, a) in enumerate(rows))


def region_total(rng: random.Random, layout: Layout) -> TaskParts:
    base, rows, _ = _sales(rng)
    text = _sales_text(rows)
    rel = f"{layout.folder('data', 'sales data')}/sales.tsv"
    matching = [a for r, a in rows if r == base]
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.value(layout.path("total.txt"), str(sum(matching)))
    checks.value(layout.path("rows.txt"), str(len(matching)))
    table = layout.sh(rel)
    spec = Spec(
        goal=f"for region exactly '{base}', write the sum of amount to {layout.show('total.txt')} and the "
        f"number of its rows to {layout.show('rows.txt')}",
        inputs=[f"{layout.show(rel)} is tab-separated with a header line (id, region, amount)"],
        output="just the integers",
    )
    return TaskParts(
        spec,
        {rel: text},
        checks.render(),
        [
            f"awk -F'\\t' 'NR>1 && $2==\"{base}\" {{s+=$3}} END {{print s}}' {table} > {layout.sh('total.txt')}",
            f"awk -F'\\t' 'NR>1 && $2==\"{base}\"' {table} | wc -l > {layout.sh('rows.txt')}",
        ],
    )


def region_maximum(rng: random.Random, layout: Layout) -> TaskParts:
    _, rows, _ = _sales(rng)
    text = _sales_text(rows)
    rel = f"{layout.folder('data', 'sales data')}/sales.tsv"
    best: dict[str, int] = {}
    for region, amount in rows:
        best[region] = max(best.get(region, 0), amount)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("max_by_region.txt"), [f"{r} {a}" for r, a in sorted(best.items())])
    spec = Spec(
        goal=f"write the largest amount of each region to {layout.show('max_by_region.txt')}",
        inputs=[f"{layout.show(rel)} is tab-separated with a header line (id, region, amount)"],
        output="one line per region, 'region amount' (a single space between), sorted by region",
        notes=["Treat region names as exact keys; some names start with another region's name."],
    )
    return TaskParts(
        spec,
        {rel: text},
        checks.render(),
        [
            "awk -F'\\t' 'NR>1 && (!($2 in m) || $3+0>m[$2]) {m[$2]=$3+0} END {for (r in m) print r, m[r]}' "
            f"{layout.sh(rel)} | sort > {layout.sh('max_by_region.txt')}"
        ],
    )


def items_above(rng: random.Random, layout: Layout) -> TaskParts:
    names = words(rng, rng.randint(8, 14))
    prices = [rng.randint(10, 300) for _ in names]
    threshold = sorted(prices)[len(prices) // 2]
    if threshold == max(prices):
        threshold -= 1
    text = "id\titem\tprice\n" + "".join(f"{i + 1}\t{n}\t{p}\n" for i, (n, p) in enumerate(zip(names, prices)))
    rel = f"{layout.folder('catalog', 'price list')}/items.tsv"
    above = [n for n, p in zip(names, prices) if p > threshold]
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("expensive.txt"), above)
    checks.value(layout.path("expensive_count.txt"), str(len(above)))
    spec = Spec(
        goal=f"write the names of the items priced above {threshold} to {layout.show('expensive.txt')}, and "
        f"how many there are to {layout.show('expensive_count.txt')}",
        inputs=[f"{layout.show(rel)} is tab-separated with a header line (id, item, price)"],
        output="one name per line in the file's order, and the count as just the integer",
        notes=[f"An item priced exactly {threshold} is not above it."],
    )
    return TaskParts(
        spec,
        {rel: text},
        checks.render(),
        [
            f"awk -F'\\t' 'NR>1 && $3>{threshold} {{print $2}}' {layout.sh(rel)} > {layout.sh('expensive.txt')}",
            f"wc -l < {layout.sh('expensive.txt')} > {layout.sh('expensive_count.txt')}",
        ],
    )


def unique_in_order(rng: random.Random, layout: Layout) -> TaskParts:
    pool = [f"{p}@{rng.choice(('example.com', 'mail.test'))}" for p in people(rng, 8)]
    entries = [rng.choice(pool) for _ in range(rng.randint(15, 25))]
    text = "email\n" + "".join(e + "\n" for e in entries)
    rel = f"{layout.folder('lists', 'mailing lists')}/signups.csv"
    unique = list(dict.fromkeys(entries))
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("unique.txt"), unique)
    checks.value(layout.path("duplicates.txt"), str(len(entries) - len(unique)))
    spec = Spec(
        goal=f"write each address of {layout.show(rel)} once, in order of first appearance, to "
        f"{layout.show('unique.txt')}, and the number of repeated lines you dropped to "
        f"{layout.show('duplicates.txt')}",
        inputs=[f"{layout.show(rel)} has a header line 'email', then one address per line"],
        output="one address per line without the header, and the number as just the integer",
    )
    return TaskParts(
        spec,
        {rel: text},
        checks.render(),
        [
            f"tail -n +2 {layout.sh(rel)} | awk '!seen[$0]++' > {layout.sh('unique.txt')}",
            f"echo $(( $(tail -n +2 {layout.sh(rel)} | wc -l) - $(wc -l < {layout.sh('unique.txt')}) )) "
            f"> {layout.sh('duplicates.txt')}",
        ],
    )


FAMILY = Family(
    name="text-processing",
    skill="filter and summarise text with grep, cut, sort, uniq and awk",
    templates={
        1: (
            Template("grep-level", "grep the lines of one level from a log", grep_level),
            Template("count-level", "count the lines of one level", count_level),
            Template("first-lines", "the first n lines of a log", first_lines),
            Template("drop-level", "the lines that are not of one level", drop_level),
        ),
        2: (
            Template("error-users", "a grep | cut | sort -u pipeline", error_users),
            Template("lines-per-user", "count lines per user (sort | uniq -c)", lines_per_user),
            Template("largest-number", "the line with the largest number (sort -n | tail)", largest_number),
            Template("user-total", "sum one user's numbers with awk", user_total),
        ),
        3: (
            Template(
                "region-total",
                "sum and count one column for one key in a TSV with a header (other keys contain it)",
                region_total,
            ),
            Template("region-maximum", "the largest amount per key in a TSV with a header", region_maximum),
            Template("items-above", "the names above a price threshold, and their count", items_above),
            Template("unique-in-order", "drop repeated lines keeping first appearances, count them", unique_in_order),
        ),
    },
)
