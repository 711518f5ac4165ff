"""Text processing with grep, cut, sort, uniq and awk over a generated log or table."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, stem, words

LEVELS = ("INFO", "WARN", "ERROR")


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
    return lines


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests()
    if difficulty in (1, 2):
        name = stem(rng)
        log = _log(rng)
        text = "".join(line + "\n" for line in log)
        checks.unchanged(f"/app/data/{name}.log", text)
        if difficulty == 1:
            level = rng.choice(("ERROR", "WARN"))
            out = f"/app/{level.lower()}s.txt"
            checks.lines(out, [line for line in log if f" {level} " in line])
            return TaskParts(
                instruction=f"Write every line of /app/data/{name}.log that contains {level} to {out}, "
                "in their original order.",
                files={f"data/{name}.log": text},
                tests=checks.render(),
                steps=[f"grep {level} /app/data/{name}.log > {out}"],
            )
        checks.lines("/app/users.txt", sorted({line.split()[2] for line in log if " ERROR " in line}))
        return TaskParts(
            instruction=f"Each line of /app/data/{name}.log is: date level user word number. Write the distinct users "
            "that have an ERROR line, sorted alphabetically, one per line, to /app/users.txt.",
            files={f"data/{name}.log": text},
            tests=checks.render(),
            steps=[f"grep ' ERROR ' /app/data/{name}.log | cut -d' ' -f3 | sort -u > /app/users.txt"],
        )
    # a header line, and regions whose names contain one another (grep would over-count)
    base = rng.choice(("north", "south", "east", "west"))
    regions = [base, f"{base}east" if base in ("north", "south") else f"{base}ern", rng.choice(("central", "coast"))]
    rows = [(rng.choice(regions), rng.randint(5, 400)) for _ in range(rng.randint(15, 30))]
    if not any(r == base for r, _ in rows):
        rows[0] = (base, rows[0][1])
    text = "id\tregion\tamount\n" + "".join(f"{i + 1}\t{r}\t{a}\n" for i, (r, a) in enumerate(rows))
    matching = [a for r, a in rows if r == base]
    checks.unchanged("/app/data/sales.tsv", text)
    checks.value("/app/total.txt", str(sum(matching)))
    checks.value("/app/rows.txt", str(len(matching)))
    return TaskParts(
        instruction=f"/app/data/sales.tsv is tab-separated with a header line (id, region, amount). For region "
        f"exactly '{base}', write the sum of amount to /app/total.txt and the number of its rows to /app/rows.txt "
        "(just the integers).",
        files={"data/sales.tsv": text},
        tests=checks.render(),
        steps=[
            f"awk -F'\\t' 'NR>1 && $2==\"{base}\" {{s+=$3}} END {{print s}}' /app/data/sales.tsv > /app/total.txt",
            f"awk -F'\\t' 'NR>1 && $2==\"{base}\"' /app/data/sales.tsv | wc -l > /app/rows.txt",
        ],
    )


FAMILY = Family(
    name="text-processing",
    skill="filter and summarise text with grep, cut, sort, uniq and awk",
    levels=(
        "grep the lines of one level from a log",
        "a grep | cut | sort -u pipeline",
        "sum and count one column for one key in a TSV with a header (other keys contain it)",
    ),
    build=build,
)
