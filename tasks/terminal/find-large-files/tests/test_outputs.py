from pathlib import Path


def test_large_files_list():
    lines = Path("/app/large_files.txt").read_text().splitlines()
    assert lines == [
        ".cache/blob.bin",
        "backups/db-2024-01.sql",
        "backups/db-2024-03.sql",
        "logs/app.log.1",
        "media/intro video.mp4",
        "media/raw/take 2.wav",
    ]


def test_sizes_untouched():
    assert Path("/app/storage/backups/db-2024-02.sql").stat().st_size == 102400
    assert Path("/app/storage/backups/db-2024-03.sql").stat().st_size == 102401
