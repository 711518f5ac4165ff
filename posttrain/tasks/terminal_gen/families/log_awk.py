"""Web log analysis with awk: counts per status code, the top clients, mean response times per
endpoint, the lines between two timestamps, and the Apache combined format."""

from __future__ import annotations

import random
from collections import Counter

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import words

LOG_FORMAT = "timestamp ip method path status seconds, separated by single spaces (timestamp as YYYY-MM-DDTHH:MM:SS)"
STATUSES = (200, 200, 200, 200, 201, 301, 304, 400, 404, 404, 500, 503)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
TOP = "ties broken by the ip in ascending text order"


def _requests(rng: random.Random, n_min: int = 30, n_max: int = 60) -> list[dict]:
    ips = [f"10.{rng.randint(0, 9)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(6)]
    paths = [f"/{w}" for w in words(rng, 3)] + [f"/api/{w}" for w in words(rng, 2)]
    day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    seconds = sorted(rng.sample(range(86400), rng.randint(n_min, n_max)))
    weights = [rng.randint(1, 9) for _ in ips]
    return [
        {
            "time": f"{day}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}",
            "ip": rng.choices(ips, weights)[0],
            "method": rng.choice(("GET", "GET", "POST")),
            "path": rng.choice(paths),
            "status": rng.choice(STATUSES),
            "rt": f"{rng.uniform(0.005, 2.5):.3f}",
        }
        for s in seconds
    ]


def _line(r: dict) -> str:
    return f"{r['time']} {r['ip']} {r['method']} {r['path']} {r['status']} {r['rt']}"


def _log_input(rng: random.Random, layout: Layout) -> tuple[str, list[dict], str, VerifierTests]:
    requests = _requests(rng)
    rel = f"{layout.folder('logs', 'web logs')}/access.log"
    text = "".join(_line(r) + "\n" for r in requests)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    return rel, requests, text, checks


def _top(values: list[str], n: int) -> list[str]:
    counted = sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0]))
    return [f"{ip} {c}" for ip, c in counted[:n]]


def _means(requests: list[dict]) -> list[str]:
    sums: dict[str, float] = {}
    counts: Counter = Counter()
    for r in requests:
        sums[r["path"]] = sums.get(r["path"], 0.0) + float(r["rt"])
        counts[r["path"]] += 1
    return [f"{p} {sums[p] / counts[p]:.3f}" for p in sorted(sums)]


def _parts(spec: Spec, files: dict[str, str], checks: VerifierTests, *steps: str) -> TaskParts:
    return TaskParts(spec, files, checks.render(), list(steps))


TOP_PIPE = "sort | uniq -c | sort -k1,1nr -k2,2 | head -n {n} | awk '{{print $2, $1}}'"
MEAN_AWK = '{{s[$4] += $6; n[$4]++}} END {{for (p in s) printf "%s %.3f\\n", p, s[p] / n[p]}}'


# ---- difficulty 1: one command -------------------------------------------------------------


def count_status(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    status = rng.choice([r["status"] for r in requests])
    checks.value(layout.path(f"count_{status}.txt"), str(sum(r["status"] == status for r in requests)))
    spec = Spec(
        goal=f"count the requests in {layout.show(rel)} that got status {status} and write the count to "
        f"{layout.show(f'count_{status}.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="just the integer",
    )
    step = f"awk '$5 == {status} {{n++}} END {{print n + 0}}' {layout.sh(rel)} > {layout.sh(f'count_{status}.txt')}"
    return _parts(spec, {rel: text}, checks, step)


def per_status(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    counts = Counter(r["status"] for r in requests)
    checks.lines(layout.path("status_counts.txt"), [f"{s} {c}" for s, c in sorted(counts.items())])
    spec = Spec(
        goal=f"count the requests of {layout.show(rel)} per status code and write the counts to "
        f"{layout.show('status_counts.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="one line 'status count' per status code that occurs, sorted by status code",
    )
    per_status = "awk '{c[$5]++} END {for (s in c) print s, c[s]}'"
    step = f"{per_status} {layout.sh(rel)} | sort -n > {layout.sh('status_counts.txt')}"
    return _parts(spec, {rel: text}, checks, step)


def slow_paths(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    limit = rng.choice((1.0, 1.5, 2.0))
    checks.lines(layout.path("slow.txt"), [r["path"] for r in requests if float(r["rt"]) > limit])
    spec = Spec(
        goal=f"write the path of every request in {layout.show(rel)} that took more than {limit} seconds to "
        f"{layout.show('slow.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="one path per line in log order, repeats included",
    )
    return _parts(
        spec, {rel: text}, checks, f"awk '$6 > {limit} {{print $4}}' {layout.sh(rel)} > {layout.sh('slow.txt')}"
    )


def distinct_ips(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    checks.value(layout.path("clients.txt"), str(len({r["ip"] for r in requests})))
    spec = Spec(
        goal=f"count the distinct client IPs in {layout.show(rel)} and write the count to {layout.show('clients.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="just the integer",
    )
    return _parts(spec, {rel: text}, checks, f"awk '!seen[$2]++' {layout.sh(rel)} | wc -l > {layout.sh('clients.txt')}")


# ---- difficulty 2: a pipeline --------------------------------------------------------------


def top_ips(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    n = rng.randint(2, 4)
    checks.lines(layout.path("top_ips.txt"), _top([r["ip"] for r in requests], n))
    spec = Spec(
        goal=f"write the {n} client IPs with the most requests in {layout.show(rel)} to {layout.show('top_ips.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output=f"lines 'ip count', most requests first, {TOP}",
    )
    step = f"awk '{{print $2}}' {layout.sh(rel)} | {TOP_PIPE.format(n=n)} > {layout.sh('top_ips.txt')}"
    return _parts(spec, {rel: text}, checks, step)


def mean_per_path(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    checks.lines(layout.path("mean_times.txt"), _means(requests))
    spec = Spec(
        goal=f"write the mean response time of each path in {layout.show(rel)} to {layout.show('mean_times.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="one line 'path mean' per path, the mean with exactly 3 decimals, sorted by path",
    )
    step = f"awk '{MEAN_AWK.format()}' {layout.sh(rel)} | sort > {layout.sh('mean_times.txt')}"
    return _parts(spec, {rel: text}, checks, step)


def lines_between(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    i = rng.randrange(len(requests) // 3)
    j = rng.randrange(i + 3, len(requests))
    start, end = requests[i]["time"], requests[j]["time"]
    checks.lines(layout.path("window.log"), [_line(r) for r in requests if start <= r["time"] <= end])
    spec = Spec(
        goal=f"write the lines of {layout.show(rel)} from {start} to {end}, both included, to "
        f"{layout.show('window.log')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="those lines unchanged, in order",
    )
    step = f'awk \'$1 >= "{start}" && $1 <= "{end}"\' {layout.sh(rel)} > {layout.sh("window.log")}'
    return _parts(spec, {rel: text}, checks, step)


def error_paths(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _log_input(rng, layout)
    if not any(r["status"] >= 500 for r in requests):
        requests[0]["status"] = 500
        text = "".join(_line(r) + "\n" for r in requests)
        checks = VerifierTests()
        checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("failing_paths.txt"), sorted({r["path"] for r in requests if r["status"] >= 500}))
    spec = Spec(
        goal=f"write the distinct paths of {layout.show(rel)} that answered with a server error (status 500 or "
        f"above) to {layout.show('failing_paths.txt')}",
        inputs=[f"Each line of {layout.show(rel)} is: {LOG_FORMAT}"],
        output="one path per line, sorted alphabetically",
    )
    step = f"awk '$5 >= 500 {{print $4}}' {layout.sh(rel)} | sort -u > {layout.sh('failing_paths.txt')}"
    return _parts(spec, {rel: text}, checks, step)


# ---- difficulty 3: another format, a header line, a new folder, files to leave alone ---------


def combined_format(rng: random.Random, layout: Layout) -> TaskParts:
    requests = _requests(rng)
    agents = ('"curl/8.4.0"', '"Mozilla/5.0 (X11; Linux x86_64)"', '"Go-http-client/1.1"')
    lines = []
    for r in requests:
        day, clock = r["time"].split("T")
        y, m, d = day.split("-")
        size = rng.randint(0, 9000)
        r["bytes"] = size
        lines.append(
            f'{r["ip"]} - - [{d}/{MONTHS[int(m) - 1]}/{y}:{clock} +0000] "{r["method"]} {r["path"]} HTTP/1.1" '
            f'{r["status"]} {size} "-" {rng.choice(agents)}'
        )
    rel = f"{layout.folder('apache', 'apache logs')}/access_log"
    text = "".join(line + "\n" for line in lines)
    report = f"report/{requests[0]['time'][:7]}"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    counts = Counter(r["status"] for r in requests)
    checks.lines(layout.path(f"{report}/status.txt"), [f"{s} {c}" for s, c in sorted(counts.items())])
    checks.value(layout.path(f"{report}/bytes.txt"), str(sum(r["bytes"] for r in requests)))
    spec = Spec(
        goal=f"from {layout.show(rel)}, write the number of requests per status code to "
        f"{layout.show(f'{report}/status.txt')} and the total bytes sent to {layout.show(f'{report}/bytes.txt')}",
        inputs=[
            f'{layout.show(rel)} is in the Apache combined log format: ip - - [time] "request" status bytes '
            '"referer" "user agent"'
        ],
        output="lines 'status count' sorted by status code, and the total as just the integer",
        notes=[f"The folder {layout.show(report)} does not exist yet.", "User agents contain spaces."],
    )
    per_status = "awk '{c[$9]++} END {for (s in c) print s, c[s]}'"
    return _parts(
        spec,
        {rel: text},
        checks,
        f"mkdir -p {layout.sh(report)}",
        f"{per_status} {layout.sh(rel)} | sort -n > {layout.sh(f'{report}/status.txt')}",
        f"awk '{{b += $10}} END {{print b}}' {layout.sh(rel)} > {layout.sh(f'{report}/bytes.txt')}",
    )


def _csv_log(rng: random.Random, layout: Layout) -> tuple[str, list[dict], str, VerifierTests]:
    requests = _requests(rng)
    rel = f"{layout.folder('exports', 'log exports')}/requests.csv"
    text = "time,ip,method,path,status,seconds\n" + "".join(_line(r).replace(" ", ",") + "\n" for r in requests)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    return rel, requests, text, checks


def top_failing_ips(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _csv_log(rng, layout)
    n = rng.randint(2, 3)
    out = "analysis/top_failing.txt"
    checks.lines(layout.path(out), _top([r["ip"] for r in requests if r["status"] >= 400], n))
    spec = Spec(
        goal=f"write the {n} client IPs with the most failed requests (status 400 or above) in {layout.show(rel)} "
        f"to {layout.show(out)}",
        inputs=[f"{layout.show(rel)} is a CSV file with the header line time,ip,method,path,status,seconds"],
        output=f"lines 'ip count', most failures first, {TOP}",
        notes=[f"The folder of {layout.show(out)} does not exist yet."],
    )
    return _parts(
        spec,
        {rel: text},
        checks,
        f"mkdir -p {layout.sh('analysis')}",
        f"awk -F, 'NR > 1 && $5 >= 400 {{print $2}}' {layout.sh(rel)} | {TOP_PIPE.format(n=n)} > {layout.sh(out)}",
    )


def window_means(rng: random.Random, layout: Layout) -> TaskParts:
    rel, requests, text, checks = _csv_log(rng, layout)
    hour = int(requests[len(requests) // 2]["time"][11:13])
    first, last = f"{hour:02d}:00:00", f"{min(hour + rng.randint(3, 6), 23):02d}:59:59"
    chosen = [r for r in requests if first <= r["time"][11:] <= last]
    out = f"by_window/{first[:2]}-{last[:2]}.txt"
    checks.lines(layout.path(out), _means(chosen))
    spec = Spec(
        goal=f"write the mean response time per path of the requests in {layout.show(rel)} made from {first} to "
        f"{last} (both included) to {layout.show(out)}",
        inputs=[f"{layout.show(rel)} is a CSV file with the header line time,ip,method,path,status,seconds"],
        output="one line 'path mean' per path with such requests, the mean with exactly 3 decimals, sorted by path",
        notes=[f"The folder of {layout.show(out)} does not exist yet.", "All requests are from the same day."],
    )
    return _parts(
        spec,
        {rel: text},
        checks,
        f"mkdir -p {layout.sh('by_window')}",
        f'awk -F, \'NR > 1 {{t = substr($1, 12)}} NR > 1 && t >= "{first}" && t <= "{last}" '
        f"{MEAN_AWK.format()}' {layout.sh(rel)} | sort > {layout.sh(out)}",
    )


def hourly_counts(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("logs", "web logs")
    older, newer = _requests(rng, 15, 30), _requests(rng, 15, 30)
    files = {
        f"{folder}/access.log.1": "".join(_line(r) + "\n" for r in older),
        f"{folder}/access.log": "".join(_line(r) + "\n" for r in newer),
        f"{folder}/error.log": "".join(f"{r['time']} ERROR {r['path']} failed\n" for r in older[:5]),
    }
    hours = Counter(r["time"][11:13] for r in older + newer)
    checks = VerifierTests()
    for path, content in files.items():
        checks.unchanged(layout.path(path), content)
    checks.lines(layout.path("per_hour.txt"), [f"{h} {c}" for h, c in sorted(hours.items())])
    spec = Spec(
        goal=f"count the requests per hour of the day over both access logs in {layout.show(folder)}, "
        f"access.log and the rotated access.log.1, and write the counts to {layout.show('per_hour.txt')}",
        inputs=[f"Each line of the access logs is: {LOG_FORMAT}"],
        output="one line 'HH count' per hour that has requests, sorted by hour",
        notes=["error.log is not an access log; leave it out and leave every log as it is."],
    )
    logs = f"{layout.sh(f'{folder}/access.log')} {layout.sh(f'{folder}/access.log.1')}"
    return _parts(
        spec,
        files,
        checks,
        f"cat {logs} | awk '{{c[substr($1, 12, 2)]++}} END {{for (h in c) print h, c[h]}}' | sort > "
        f"{layout.sh('per_hour.txt')}",
    )


FAMILY = Family(
    name="log-awk",
    skill="analyse web access logs with awk: counts, top-N, means, time windows",
    templates={
        1: (
            Template("count-status", "count the requests of one status code", count_status),
            Template("per-status", "requests per status code (awk arrays)", per_status),
            Template("slow-paths", "the paths of requests above a time", slow_paths),
            Template("distinct-ips", "count the distinct client IPs", distinct_ips),
        ),
        2: (
            Template("top-ips", "the top n IPs by requests", top_ips),
            Template("mean-per-path", "the mean response time per endpoint", mean_per_path),
            Template("lines-between", "the lines between two timestamps", lines_between),
            Template("error-paths", "the distinct paths with server errors", error_paths),
        ),
        3: (
            Template("combined-format", "status counts and bytes from an Apache combined log", combined_format),
            Template("top-failing-ips", "top n IPs by failures in a CSV log with a header", top_failing_ips),
            Template("window-means", "mean time per endpoint in a time window of a CSV log", window_means),
            Template("hourly-counts", "requests per hour over a log and its rotated copy", hourly_counts),
        ),
    },
)
