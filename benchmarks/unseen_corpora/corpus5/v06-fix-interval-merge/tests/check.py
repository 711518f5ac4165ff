import json, secrets, subprocess, sys
CASES = [
    [], [[5, 5]], [[8, 10], [1, 3], [2, 4], [15, 18]], [[1, 4], [4, 4], [0, 0]],
    [[1, 10], [2, 3], [4, 5]], [[-5, -1], [-1, 2], [3, 3]], [[3, 4], [1, 2]],
]
WANT = [[], [[5, 5]], [[1, 4], [8, 10], [15, 18]], [[0, 0], [1, 4]],
        [[1, 10]], [[-5, 2], [3, 3]], [[1, 2], [3, 4]]]
nonce = secrets.token_hex(8)
child = (
    "import json,sys,copy\n"
    "sys.path.insert(0,'/app')\n"
    "from intervals.merge import merge\n"
    "cases=json.loads(sys.argv[1]); res=[]; unchanged=True\n"
    "for c in cases:\n"
    "    before=copy.deepcopy(c); res.append(merge(c)); unchanged = unchanged and c==before\n"
    "print(json.dumps({'nonce':sys.argv[2],'res':res,'unchanged':unchanged}))\n"
)
p = subprocess.run(["/usr/bin/python3", "-I", "-B", "-c", child, json.dumps(CASES), nonce],
                   capture_output=True, text=True, timeout=30, cwd="/tmp",
                   env={"PATH": "/usr/bin:/bin"})
try:
    out = json.loads(p.stdout.strip().splitlines()[-1])
except Exception:
    print("no result", p.stderr[-500:]); sys.exit(1)
ok = out.get("nonce") == nonce and out.get("res") == WANT and out.get("unchanged") is True
print("res", out.get("res"))
sys.exit(0 if ok else 1)
