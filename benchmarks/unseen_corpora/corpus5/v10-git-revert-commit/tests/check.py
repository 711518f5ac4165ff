import os, subprocess, sys
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0"}
def git(*a):
    p = subprocess.run(["/usr/bin/git", "--no-pager", "-c", "core.fsmonitor=false",
                        "-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*",
                        "-C", "/app/repo", *a], capture_output=True, text=True, env=ENV, timeout=30)
    if p.returncode != 0:
        raise SystemExit("git failed: %s %s" % (a, p.stderr))
    return p.stdout
subjects = git("rev-list", "--format=%s", "--no-commit-header", "main").splitlines()
print(subjects)
ok = subjects == ['Revert "optimize total"', "docs: readme", "optimize total", "add mean", "add total"]
ok = ok and len(git("rev-list", "--max-parents=1", "--min-parents=1", "main^..main").split()) == 1
calc = git("cat-file", "-p", "main:calc.py")
ok = ok and calc == "def total(xs):\n    return sum(xs)\n\ndef mean(xs):\n    return total(xs) / len(xs)\n"
ok = ok and git("cat-file", "-p", "main~1:calc.py").count("sum(xs[1:])") == 1
ok = ok and git("cat-file", "-p", "main:README.md") == "# calc\nTiny helpers.\n"
ok = ok and git("diff-tree", "--no-ext-diff", "--no-commit-id", "--name-only", "-r", "main").split() == ["calc.py"]
# history below the new commit is the original one (authored 2023-01-01)
ok = ok and set(git("log", "--format=%ad", "--date=format:%Y-%m-%d", "main~1").split()) == {"2023-01-01"}
# working tree clean: compare the file on disk with HEAD's blob
ok = ok and open("/app/repo/calc.py").read() == calc
sys.exit(0 if ok else 1)
