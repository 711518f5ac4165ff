import subprocess, sys
import pytest


def slug(text):
    r = subprocess.run([sys.executable, '-I', '/app/slugify.py', text], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0
    return r.stdout


@pytest.mark.parametrize('text,want', [
    ('Hello, World!', 'hello-world'),
    ('  Déjà Vu 2024  ', 'd-j-vu-2024'),
    ('already-a-slug', 'already-a-slug'),
    ('***', ''),
    ('C++ / Rust -- Go', 'c-rust-go'),
])
def test_slug(text, want):
    assert slug(text) == want + '\n'
