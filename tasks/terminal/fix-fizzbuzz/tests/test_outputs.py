import subprocess
import sys

sys.path.insert(0, "/app")


def reference(n):
    out = []
    for i in range(1, n + 1):
        out.append("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i))
    return out


def test_function():
    import fizzbuzz
    for n in (1, 5, 15, 31, 100):
        assert fizzbuzz.fizzbuzz(n) == reference(n)


def test_cli():
    for n in (3, 15, 46):
        out = subprocess.run(["python3", "/app/fizzbuzz.py", str(n)], capture_output=True, text=True, check=True).stdout
        assert out.splitlines() == reference(n)
