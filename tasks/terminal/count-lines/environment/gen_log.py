import random
rng = random.Random(7)
paths = ["/", "/login", "/api/items", "/api/items/42", "/static/app.js", "/health"]
for i in range(1337):
    ip = f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}"
    status = rng.choice([200, 200, 200, 301, 404, 500])
    print(f'{ip} - - [12/Mar/2024:10:{i // 60 % 60:02d}:{i % 60:02d} +0000] "GET {rng.choice(paths)} HTTP/1.1" {status} {rng.randint(100, 9000)}')
