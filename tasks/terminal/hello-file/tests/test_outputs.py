from pathlib import Path


def test_hello_file_exists():
    assert Path("/app/hello.txt").is_file()


def test_hello_file_content_exact():
    assert Path("/app/hello.txt").read_bytes() == b"hello world\n"
