import os
import subprocess


def test_binary_is_elf_and_executable():
    assert os.path.isfile("/app/hello") and os.access("/app/hello", os.X_OK)
    with open("/app/hello", "rb") as fh:
        assert fh.read(4) == b"\x7fELF"


def test_binary_behaviour():
    assert subprocess.run(["/app/hello"], capture_output=True, text=True).stdout == "Hello, C!\n"
    assert subprocess.run(["/app/hello", "bob"], capture_output=True, text=True).stdout == "Hello, bob!\n"
