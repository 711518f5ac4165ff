import gzip, random, sys
from pathlib import Path

rng = random.Random(2024)
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
codes = ["E1001", "E1002", "E2040", "E3100", "E3101", "E4004", "E5000"]
weights = [9, 3, 5, 2, 2, 4, 1]
comps = ["api", "db", "auth", "worker", "cache"]


def line(ts):
    lvl = rng.choices(["INFO", "DEBUG", "WARN", "ERROR"], [10, 4, 4, 5])[0]
    comp = rng.choice(comps)
    code = rng.choices(codes, weights)[0]
    if lvl == "ERROR":
        msg = rng.choice([f"request failed code={code}", f"timeout talking to upstream code={code}",
                          f"unhandled exception code={code} (see trace)"])
    elif lvl == "WARN":
        msg = rng.choice([f"slow query code={code}", "retrying"])
    elif lvl == "INFO":
        msg = rng.choice(["request ok", f"recovered after ERROR code={code}", "ERROR budget at 12%",
                          f"user mentioned code={code} in ticket"])
    else:
        msg = "tick"
    return f"{ts} {lvl} [{comp}] {msg}"


def stamp(day, i):
    return f"2024-03-{day:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"


files = {"app.log": (5, 400), "app.log.1": (4, 350), "app.log.2.gz": (3, 300), "app.log.3.gz": (2, 250),
         "worker.log": (5, 200)}
for name, (day, n) in files.items():
    text = "\n".join(line(stamp(day, i * 37)) for i in range(n)) + "\n"
    if name == "worker.log":
        text += f"{stamp(day, 99999)} ERROR [worker] two codes code=E9999 then code=E1001\n"
        text += f"{stamp(day, 99998)} ERROR [worker] missing code here, mentions E7777 without key\n"
        text += f"{stamp(day, 99997)} ERROR [worker] malformed code=E12345 and code=E12\n"
    if name.endswith(".gz"):
        (out / name).write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        (out / name).write_text(text)
(out / "README.txt").write_text("ERROR code=E0000 this is not a log file\n")
