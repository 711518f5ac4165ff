import subprocess

def run(tmp_path, text, k):
    f = tmp_path / "in.txt"
    f.write_text(text)
    p = subprocess.run(["/usr/bin/python3", "-I", "/app/wordfreq.py", str(f), str(k)],
                       capture_output=True, text=True, timeout=30,
                       env={"PATH": "/usr/bin:/bin"})
    return p.stdout

def test_basic(tmp_path):
    assert run(tmp_path, "b a b c a b", 2) == "b 3\na 2\n"

def test_case_and_punct(tmp_path):
    assert run(tmp_path, "Dog, dog! DOG? cat's cat-cat", 3) == "cat 3\ndog 3\ns 1\n"

def test_ties_alpha(tmp_path):
    assert run(tmp_path, "zeta beta alpha gamma", 3) == "alpha 1\nbeta 1\ngamma 1\n"

def test_fewer_than_k(tmp_path):
    assert run(tmp_path, "one two two", 10) == "two 2\none 1\n"

def test_digits_split(tmp_path):
    assert run(tmp_path, "abc123abc x9x\nABC", 2) == "abc 3\nx 2\n"
