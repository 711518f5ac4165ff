"""Soak `posttrain serve` at twice its capacity with well-behaved and abusive clients.

Starts a real server process (with an API key), measures its capacity (non-streaming chats from
--max-concurrency closed-loop clients for --capacity-seconds, or takes --capacity), then for
--duration seconds offers twice that rate as Poisson arrivals, each request one of:

    chat          a non-streaming chat completion
    stream        a streaming chat completion, read to [DONE]
    disconnect    a streaming chat whose client hangs up (a reset or a close) after 0 to
                  max_tokens/2 tokens (0: while it may still wait in the queue)
    slow_reader   a streaming chat read a few hundred bytes at a time with pauses, on a small
                  receive buffer (the server's writes block on it)
    oversized     a body past --max-body-bytes (413), or a prompt past the context (400)
    malformed     a body that is not JSON, is cut short, is not UTF-8, or has wrong types (400)
    unauthorized  no key, or a wrong one (401)

Every client speaks plain HTTP/1.1 over asyncio sockets (one connection a request), so that a
disconnect is a real reset and a slow reader a real full receive window.

At the end (after the clients finish and the server drains): the 5xx answers (seen by clients,
and counted by the server's /metrics), the engine's live sequences, KV blocks in use and open
requests (goal 0 each), the server's resident memory after warm-up and at the end (goal within
5%), p50/p99 latency of the successful chat and stream requests, answers by kind and status,
and the server's refusal counts and log lines.

    OMP_NUM_THREADS=1 python benchmarks/serve_soak.py [--model smollm2-135m] [--duration 600] --out FILE.json
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import random
import re
import socket
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from posttrain.console import emit_benchmark
from posttrain.serve.bench import ServerProcess

KEY = "soak-key"
KINDS = {  # share of the arrivals
    "chat": 0.28,
    "stream": 0.28,
    "disconnect": 0.12,
    "slow_reader": 0.08,
    "oversized": 0.10,
    "malformed": 0.10,
    "unauthorized": 0.04,
}
TOPICS = ("rivers", "bread", "stars", "trains", "owls", "glass", "tides", "maps", "salt", "bells", "moss", "kites")
CLIENT_TIMEOUT_S = 300.0
TEXT_EVENT = re.compile(rb'"content": "[^"]')  # a streamed chunk with text (the first carries only the role)
MAX_OUTSTANDING = 512  # client tasks in flight; an arrival past that is counted as skipped


@dataclass
class Answer:
    kind: str
    status: int | None  # None: no status line (connection closed or reset first, or the client hung up)
    seconds: float
    first_token_s: float | None = None  # streams: to the first event that carries text
    error: str | None = None


class Server:
    """The soaked server: `posttrain serve` in a child process (serve/bench.py's ServerProcess),
    its stderr drained by a thread (a full pipe would stall it) and kept for the refusal lines."""

    def __init__(self, args) -> None:
        extra = (
            "--api-key", KEY, "--max-queue", str(args.max_queue), "--max-body-bytes", str(args.max_body_bytes),
            "--request-timeout", str(args.request_timeout),
            *(("--max-model-len", str(args.max_model_len)) if args.max_model_len else ()),
        )  # fmt: skip
        self.child = ServerProcess(args.model, "standard", args.max_concurrency, extra)
        self.host, self.port = "127.0.0.1", self.child.port
        self.log: list[str] = []
        self._drain = threading.Thread(target=self._read_log, daemon=True)
        self._drain.start()

    def _read_log(self) -> None:
        for raw in self.child.process.stderr:
            self.log.append(raw.decode(errors="replace").rstrip("\n"))

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.child.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024

    def metrics(self) -> str:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        connection.request("GET", "/metrics")
        return connection.getresponse().read().decode()

    def metric(self, name: str) -> float:
        return self.child.metric(name)

    def stop(self) -> None:
        self.child.stop()
        self._drain.join(timeout=10)


# ---- the clients --------------------------------------------------------------------------------


def chat_body(model: str, rng: random.Random, max_tokens: int, stream: bool) -> bytes:
    question = f"In one sentence, tell me something about {rng.choice(TOPICS)} (note {rng.randrange(10**6)})."
    body = {
        "model": model,
        "messages": [{"role": "user", "content": question}],
        "max_tokens": max_tokens,
        "temperature": 0.7,
        "seed": rng.randrange(10**6),
        "stream": stream,
    }
    return json.dumps(body).encode()


def http_request(body: bytes | None, key: str | None = KEY, chunked: bool = False) -> bytes:
    lines = ["POST /v1/chat/completions HTTP/1.1", "Host: soak", "Content-Type: application/json", "Connection: close"]
    if key is not None:
        lines.append(f"Authorization: Bearer {key}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        payload = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in _pieces(body, 65536)) + b"0\r\n\r\n"
    else:
        lines.append(f"Content-Length: {len(body)}")
        payload = body
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def read_body(reader, headers, on_chunk=None, pause: tuple[float, float] | None = None, rng=None) -> bytes:
    """The response body (chunked or sized); `pause`: sleep that long (a range) before each read."""
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    body = b""
    while True:
        if pause:
            await asyncio.sleep(rng.uniform(*pause))
        size = int((await reader.readline()).split(b";")[0], 16)
        if size == 0:
            await reader.readline()
            return body
        chunk = await reader.readexactly(size)
        await reader.readexactly(2)
        body += chunk
        if on_chunk is not None and on_chunk(chunk):
            return body


async def one_request(kind: str, host: str, port: int, model: str, rng: random.Random, args) -> Answer:
    started = time.monotonic()
    slow = kind == "slow_reader"
    sock = socket.socket()
    if slow:  # a small receive window: the server's writes wait on this client
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    first: list[float] = []
    tokens = 0
    writer = None
    try:
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
        reader, writer = await asyncio.open_connection(sock=sock, limit=1024 if slow else 2**16)
        request, hang_up_after = _request_for(kind, model, rng, args)
        writer.write(request)
        status, headers = await read_head(reader)

        def on_chunk(chunk: bytes) -> bool:
            nonlocal tokens
            if TEXT_EVENT.search(chunk):
                tokens += 1
                if not first:
                    first.append(time.monotonic() - started)
            return hang_up_after is not None and tokens >= hang_up_after

        pause = (0.02, 0.15) if slow else None
        await read_body(reader, headers, on_chunk, pause, rng)
        if hang_up_after is not None and status == 200:
            if rng.random() < 0.5:
                writer.transport.abort()  # a reset
            else:
                writer.close()
        return Answer(kind, status, time.monotonic() - started, first[0] if first else None)
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
        return Answer(kind, None, time.monotonic() - started, error=type(exc).__name__)
    finally:
        if writer is not None:
            writer.close()
        else:
            sock.close()


def _request_for(kind: str, model: str, rng: random.Random, args) -> tuple[bytes, int | None]:
    """(the request's bytes, after how many streamed tokens its client hangs up, or None)."""
    if kind in ("chat", "stream", "slow_reader", "disconnect"):
        body = chat_body(model, rng, args.max_tokens, stream=kind != "chat")
        return http_request(body), rng.randint(0, max(1, args.max_tokens // 2)) if kind == "disconnect" else None
    if kind == "unauthorized":
        return http_request(chat_body(model, rng, 8, False), key=rng.choice([None, "not-the-key"])), None
    if kind == "oversized":
        if rng.random() < 0.5:  # past the byte limit: 413 (with Content-Length, or chunked)
            text = "x" * (args.max_body_bytes + 1024)
            body = json.dumps({"model": model, "messages": [{"role": "user", "content": text}]}).encode()
            return http_request(body, chunked=rng.random() < 0.5), None
        # under the byte limit, past the context: tokenized, then 400 context_length_exceeded
        text = " ".join(rng.choice(TOPICS) for _ in range(min(args.max_body_bytes // 8, 40_000)))
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": text}]}).encode()
        return http_request(body), None
    bodies = [
        b'{"model": "' + model.encode() + b'", "messages": [{"role": "user", "content": "hi"',  # cut short
        b"this is not json at all",
        b'{"model": "' + model.encode() + b'", "messages": "hello"}',  # wrong type
        b'{"model": "' + model.encode() + b'", "messages": [{"role": "user", "content": "\xff\xfe"}]}',  # not UTF-8
        b'{"model": "' + model.encode() + b'", "messages": [], "max_tokens": -3}',
        b"",
    ]
    return http_request(rng.choice(bodies)), None


# ---- the phases ---------------------------------------------------------------------------------


async def measure_capacity(server: Server, args, rng: random.Random) -> float:
    """Completed non-streaming chats per second from --max-concurrency closed-loop clients."""
    await one_request("chat", server.host, server.port, args.model, rng, args)  # warm-up
    done: list[Answer] = []
    end = time.monotonic() + args.capacity_seconds

    async def client(seed: int) -> None:
        local = random.Random(seed)
        while time.monotonic() < end:
            answer = await one_request("chat", server.host, server.port, args.model, local, args)
            if answer.status == 200:
                done.append(answer)

    started = time.monotonic()
    await asyncio.gather(*(client(rng.randrange(10**9)) for _ in range(args.max_concurrency)))
    return len(done) / (time.monotonic() - started)


@dataclass
class Soak:
    answers: list[Answer] = field(default_factory=list)
    skipped: int = 0
    rss_samples: list[tuple[float, float]] = field(default_factory=list)
    rss_after_warmup_mb: float | None = None


async def soak(server: Server, args, rate: float, rng: random.Random) -> Soak:
    result = Soak()
    kinds, weights = list(KINDS), list(KINDS.values())
    tasks: set[asyncio.Task] = set()
    started = time.monotonic()
    end = started + args.duration
    warmup = min(args.warmup, args.duration / 4)
    next_sample = started

    async def run(kind: str, seed: int) -> None:
        try:
            answer = await asyncio.wait_for(
                one_request(kind, server.host, server.port, args.model, random.Random(seed), args), CLIENT_TIMEOUT_S
            )
        except TimeoutError:
            answer = Answer(kind, None, CLIENT_TIMEOUT_S, error="client timeout")
        result.answers.append(answer)

    arrival = started
    while (now := time.monotonic()) < end:
        if now >= next_sample:
            result.rss_samples.append((round(now - started, 1), round(server.rss_mb(), 1)))
            if result.rss_after_warmup_mb is None and now - started >= warmup:
                result.rss_after_warmup_mb = result.rss_samples[-1][1]
            next_sample += args.rss_every
        arrival += rng.expovariate(rate)
        await asyncio.sleep(max(0.0, arrival - time.monotonic()))
        if time.monotonic() >= end:
            break
        if len(tasks) >= MAX_OUTSTANDING:
            result.skipped += 1
            continue
        task = asyncio.create_task(run(rng.choices(kinds, weights)[0], rng.randrange(10**9)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(tasks)
    if result.rss_after_warmup_mb is None:
        result.rss_after_warmup_mb = server.rss_mb()
    return result


def drain(server: Server, timeout_s: float = 60.0) -> dict:
    """The engine's occupancy once no request runs or waits (or at the timeout)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.metric("running_requests") == 0 and server.metric("queue_length") == 0:
            if server.metric("engine_sequences") == 0:
                break
        time.sleep(0.25)
    return {name: int(server.metric(name)) for name in ("engine_sequences", "kv_blocks_in_use", "open_requests")}


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def server_statuses(metrics: str) -> dict[str, int]:
    counts: Counter = Counter()
    pattern = r'posttrain_serve_requests_total\{endpoint="[^"]*",status="(\d+)"\} (\S+)'
    for status, count in re.findall(pattern, metrics):
        counts[status] += int(float(count))
    return dict(sorted(counts.items()))


def report(args, capacity: float, measured: bool, run: Soak, leaks: dict, rss_end: float, server: Server) -> dict:
    by_kind: dict[str, Counter] = {}
    for answer in run.answers:
        by_kind.setdefault(answer.kind, Counter())[str(answer.status) if answer.status else "no_status"] += 1
    ok = [a for a in run.answers if a.status == 200 and a.kind in ("chat", "stream")]
    metrics = server.metrics()
    statuses = server_statuses(metrics)
    refusals = re.findall(r'posttrain_serve_refused_total\{reason="(\w+)"\} (\S+)', metrics)
    refused = {reason: int(float(count)) for reason, count in refusals}
    log_lines = [line for line in server.log if line.startswith("serve: ")]
    client_5xx = sum(1 for a in run.answers if a.status is not None and a.status >= 500)
    server_5xx = sum(count for status, count in statuses.items() if status.startswith("5"))
    rss_change = rss_end / run.rss_after_warmup_mb - 1 if run.rss_after_warmup_mb else None
    return {
        "benchmark": "serve_soak",
        "model": args.model,
        "duration_s": args.duration,
        "max_concurrency": args.max_concurrency,
        "max_queue": args.max_queue,
        "max_tokens": args.max_tokens,
        "capacity_rps": round(capacity, 3),
        "capacity_measured": measured,
        "offered_rps": round(2 * capacity, 3),
        "requests": len(run.answers),
        "arrivals_skipped": run.skipped,
        "answers_by_kind": {kind: dict(sorted(c.items())) for kind, c in sorted(by_kind.items())},
        "client_errors": dict(Counter(a.error for a in run.answers if a.error)),
        "responses_5xx_seen_by_clients": client_5xx,
        "responses_5xx_counted_by_server": server_5xx,
        "server_requests_by_status": statuses,
        "server_refused_by_reason": refused,
        "server_refusal_log_lines": len(log_lines),
        "after_drain": leaks,
        "rss_mb_after_warmup": run.rss_after_warmup_mb,
        "rss_mb_end": round(rss_end, 1),
        "rss_change": round(rss_change, 4) if rss_change is not None else None,
        "rss_mb_samples": run.rss_samples,
        "latency_s": {
            "ok_requests": len(ok),
            "p50": _round(percentile([a.seconds for a in ok], 0.5)),
            "p99": _round(percentile([a.seconds for a in ok], 0.99)),
            "stream_first_token_p50": _round(percentile([a.first_token_s for a in ok if a.first_token_s], 0.5)),
            "stream_first_token_p99": _round(percentile([a.first_token_s for a in ok if a.first_token_s], 0.99)),
            "mean": _round(statistics.fmean(a.seconds for a in ok) if ok else None),
        },
        "goals": {
            "no_5xx": client_5xx == 0 and server_5xx == 0,
            "no_leaked_sequences_or_blocks": not any(leaks.values()),
            "rss_within_5_percent": rss_change is not None and abs(rss_change) <= 0.05,
        },
    }


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of soak at twice the capacity")
    parser.add_argument("--capacity", type=float, default=None, help="requests/s; default: measured first")
    parser.add_argument("--capacity-seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds into the soak of the RSS baseline")
    parser.add_argument("--rss-every", type=float, default=5.0)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--max-concurrency", type=int, default=8)
    parser.add_argument("--max-queue", type=int, default=8)
    parser.add_argument("--max-body-bytes", type=int, default=256 * 1024)
    parser.add_argument("--max-model-len", type=int, default=None)
    parser.add_argument("--request-timeout", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    rng = random.Random(args.seed)
    server = Server(args)
    try:
        measured = args.capacity is None
        capacity = asyncio.run(measure_capacity(server, args, rng)) if measured else args.capacity
        if capacity <= 0:
            raise SystemExit("the server completed no request while its capacity was measured")
        print(f"capacity {capacity:.2f} requests/s; soaking at {2 * capacity:.2f}/s", file=sys.stderr)
        run = asyncio.run(soak(server, args, 2 * capacity, rng))
        leaks = drain(server)
        rss_end = server.rss_mb()
        result = report(args, capacity, measured, run, leaks, rss_end, server)
    finally:
        server.stop()
    emit_benchmark(result, args.out)


if __name__ == "__main__":
    main()
