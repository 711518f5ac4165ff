from pathlib import Path


def test_revenue_by_country():
    lines = Path("/app/revenue_by_country.csv").read_text().splitlines()
    assert lines == [
        "country,orders,revenue",
        "US,40,1967.31",
        "BR,43,1918.74",
        "NL,28,1438.50",
        "DE,26,1431.67",
        "FR,30,1296.29",
        "JP,21,1036.14",
    ]


def test_top_products():
    lines = Path("/app/top_products.csv").read_text().splitlines()
    assert lines == ["product,units", "sprocket,211", "widget,208", "bracket,173"]
