import os
from pathlib import Path

ROOT = Path("/app/photos")

# original name -> expected name after renaming
EXPECTED = {
    "2023/Beach Day.JPG": "2023/Beach Day.jpg",
    "2023/sunset.jpeg": "2023/sunset.jpg",
    "2023/notes.txt": "2023/notes.txt",
    "2023/archive.jpeg.txt": "2023/archive.jpeg.txt",
    "2024/trip 01/IMG 0001.JPG": "2024/trip 01/IMG 0001.jpg",
    "2024/trip 01/IMG 0002.Jpeg": "2024/trip 01/IMG 0002.jpg",
    "2024/trip 01/cover.JPEG": "2024/trip 01/cover.jpg",
    "2024/family.jpg": "2024/family.jpg",
    "raw/DSC_1000.JPG.bak": "raw/DSC_1000.JPG.bak",
    "raw/clip.mov": "raw/clip.mov",
    "raw/DSC_1001.jPg": "raw/DSC_1001.jpg",
    "export.JPEG/thumb.png": "export.JPEG/thumb.png",
    "export.JPEG/thumb 2.JPG": "export.JPEG/thumb 2.jpg",
    "top level.jpeg": "top level.jpg",
    "jpeg": "jpeg",
}


def current_files():
    out = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        for name in filenames:
            out.add(os.path.relpath(os.path.join(dirpath, name), ROOT))
    return out


def test_exact_file_set():
    assert current_files() == set(EXPECTED.values())


def test_contents_preserved():
    for old, new in EXPECTED.items():
        path = ROOT / new
        assert path.is_file() and not path.is_symlink(), new
        assert path.read_text() == f"photo-data:{old}\n", new


def test_directories_not_renamed():
    dirs = set()
    for dirpath, dirnames, _ in os.walk(ROOT):
        for d in dirnames:
            dirs.add(os.path.relpath(os.path.join(dirpath, d), ROOT))
    assert dirs == {"2023", "2024", "2024/trip 01", "raw", "export.JPEG"}
