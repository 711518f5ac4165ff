import random

rng = random.Random(5150)
routes = [("GET", "/api/users/{}", 30, 0.35), ("GET", "/api/users", 60, 0.15), ("POST", "/api/orders", 120, 0.12),
          ("GET", "/api/orders/{}/items", 80, 0.1), ("GET", "/health", 2, 0.18), ("DELETE", "/api/users/{}", 50, 0.05),
          ("GET", "/api/search", 400, 0.05)]
lines = []
for i in range(2500):
    method, tmpl, base, _ = rng.choices(routes, [r[3] for r in routes])[0]
    path = tmpl.format(rng.randint(1, 99999))
    if tmpl == "/api/search":
        path += "?q=" + rng.choice(["shoes", "red+hat", "a%20b"])
    if tmpl == "/api/users" and rng.random() < 0.3:
        path += "?page=" + str(rng.randint(1, 9))
    status = rng.choices([200, 201, 304, 404, 500], [80, 5, 5, 6, 4])[0]
    ms = int(rng.lognormvariate(0, 0.6) * base) + 1
    if rng.random() < 0.01:
        lat = "-"
    elif ms >= 1000:
        lat = f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    else:
        lat = f"{ms}ms"
    ts = f"2024-05-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
    lines.append(f"{ts} {method} {path} {status} {lat}")
open("/app/access.log", "w").write("\n".join(lines) + "\n")
