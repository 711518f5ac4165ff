import sys


def fizzbuzz(n):
    """Return the FizzBuzz lines for 1..n (inclusive)."""
    out = []
    for i in range(1, n):
        if i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        elif i % 15 == 0:
            out.append("FizzBuzz")
        else:
            out.append(str(i))
    return out


if __name__ == "__main__":
    print("\n".join(fizzbuzz(int(sys.argv[1]))))
