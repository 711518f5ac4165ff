from pathlib import Path


def test_names():
    assert Path("/app/cheap_in_stock.txt").read_text().splitlines() == [
        "Blue Kettle", "Classic Cable", "Classic Speaker", "Eco Fan", "Eco Mug", "Mega Notebook", "Red Chair",
        "Retro Fan", "Retro Mug", "Silent Fan", "Smart Lamp", "Tiny Notebook", "Turbo Notebook"]
