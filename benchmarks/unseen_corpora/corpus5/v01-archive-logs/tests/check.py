import os, subprocess, sys, tarfile, tempfile
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LC_ALL": "C"}

def run(dirpath):
    p = subprocess.run(["/bin/bash", "/app/archive.sh", dirpath], capture_output=True,
                       text=True, env=ENV, timeout=30)
    return p.stdout

def case1():
    t = tempfile.mkdtemp(prefix="vq1_")
    logs = {"alpha.log": "first\n", "beta.log": "x" * 5000, "with space.log": "sp\n", "-dash.log": "d\n"}
    for k, v in logs.items():
        open(os.path.join(t, k), "w").write(v)
    open(os.path.join(t, "keep.txt"), "w").write("keep")
    os.mkdir(os.path.join(t, "sub")); open(os.path.join(t, "sub", "inner.log"), "w").write("in")
    os.mkdir(os.path.join(t, "dir.log"))
    out = run(t)
    if out != "archived 4 files\n":
        print("bad stdout", repr(out)); return False
    arc = os.path.join(t, "archive.tar.gz")
    with tarfile.open(arc, "r:gz") as tf:
        got = {m.name.lstrip("./"): tf.extractfile(m).read().decode() for m in tf.getmembers() if m.isfile()}
    if got != logs:
        print("bad archive", sorted(got)); return False
    left = sorted(os.listdir(t))
    if left != sorted(["archive.tar.gz", "keep.txt", "sub", "dir.log"]):
        print("bad leftovers", left); return False
    return os.path.exists(os.path.join(t, "sub", "inner.log"))

def case2():
    t = tempfile.mkdtemp(prefix="vq2_")
    open(os.path.join(t, "readme.md"), "w").write("r")
    out = run(t)
    if out != "archived 0 files\n":
        print("bad stdout 0", repr(out)); return False
    return sorted(os.listdir(t)) == ["readme.md"]

sys.exit(0 if case1() and case2() else 1)
