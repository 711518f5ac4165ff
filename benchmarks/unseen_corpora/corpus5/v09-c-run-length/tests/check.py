import itertools, os, subprocess, sys, tempfile
ENV = {"PATH": "/usr/bin:/bin"}
d = tempfile.mkdtemp(prefix="vrle")
exe = os.path.join(d, "rle")
c = subprocess.run(["/usr/bin/gcc", "-O2", "-o", exe, "/app/rle.c"], env=ENV,
                   capture_output=True, text=True, timeout=60)
if c.returncode != 0:
    print(c.stderr[-800:]); sys.exit(1)
def model(b):
    return b"".join(str(len(list(g))).encode() + bytes([k]) for k, g in itertools.groupby(b))
cases = [b"", b"z", b"aaab\n", b"x" * 1000 + b"y" * 12, b"1112223", b"ab" * 50,
         bytes([0, 0, 255, 255, 255, 10]), b"\n\n\n \t\t"]
ok = True
for b in cases:
    p = subprocess.run([exe], input=b, capture_output=True, env=ENV, timeout=10)
    if p.stdout != model(b):
        print("mismatch for", b[:20], p.stdout[:40]); ok = False
sys.exit(0 if ok else 1)
