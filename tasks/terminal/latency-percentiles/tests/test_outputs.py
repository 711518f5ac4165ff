from pathlib import Path


def test_latency_csv():
    assert Path("/app/latency.csv").read_text().splitlines() == [
        "endpoint,count,p50,p95,max",
        "GET /api/users/:id,808,31,82,180",
        "GET /health,478,2,5,11",
        "GET /api/users,402,60,158,345",
        "POST /api/orders,275,124,319,529",
        "GET /api/orders/:id/items,266,81,221,545",
        "DELETE /api/users/:id,141,50,133,223",
        "GET /api/search,115,407,1129,1865",
    ]
