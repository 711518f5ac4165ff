import os, subprocess, sys, tempfile
DATA = '''2024-02-28T23:30:00-02:00 deploy
2024-02-29T00:15:00+01:00 deploy
2024-02-29T12:00:00Z check

2024-03-01T08:59:59+09:00 check
2024-03-01T09:00:00+09:00 login
2023-12-31T23:59:59-00:30 newyear
'''
EXPECTED = "date,count\n2024-01-01,1\n2024-02-28,1\n2024-02-29,3\n2024-03-01,1\n"
fd, path = tempfile.mkstemp(suffix=".txt")
os.write(fd, "\n".join(l.strip() for l in DATA.splitlines()).encode() + b"\n"); os.close(fd)
ok = True
for tz in ("UTC", "Asia/Tokyo"):
    env = {"PATH": "/usr/bin:/bin", "TZ": tz, "HOME": "/root"}
    p = subprocess.run(["/usr/bin/python3", "-I", "/app/daily.py", path], capture_output=True,
                       text=True, env=env, timeout=30)
    if p.stdout != EXPECTED:
        print(tz, "got", repr(p.stdout)); ok = False
sys.exit(0 if ok else 1)
