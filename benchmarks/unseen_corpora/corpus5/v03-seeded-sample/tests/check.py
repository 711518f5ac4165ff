import os, random, subprocess, sys, tempfile
lines = ["item-%03d-%s" % (i, "abcdefg"[i % 7] * (i % 5 + 1)) for i in range(137)]
fd, path = tempfile.mkstemp(); os.write(fd, ("\n".join(lines) + "\n").encode()); os.close(fd)
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/root"}
def run(*a):
    return subprocess.run(["/usr/bin/python3", "-I", "/app/pick.py", *map(str, a), path],
                          capture_output=True, text=True, env=ENV, timeout=30)
ok = True
for seed, k in [(7, 5), (424242, 17), (-3, 1), (2**40 + 11, 40)]:
    want = "".join(x + "\n" for x in random.Random(seed).sample(lines, k))
    p = run(seed, k)
    if p.returncode != 0 or p.stdout != want:
        print("seed", seed, "mismatch"); ok = False
p = run(5, 500)
if p.returncode != 2 or "error: not enough lines" not in p.stderr or p.stdout:
    print("bad error case", p.returncode); ok = False
sys.exit(0 if ok else 1)
