import json, os
os.makedirs("/tmp/grader", exist_ok=True)
want = {'ana': 4, 'ben': 4, 'cy': 2, 'dee': 1}
got = json.load(open("/app/sessions.json"))
ok = isinstance(got, dict) and got == want
with open("/tmp/grader/verdict", "w") as f:
    f.write("1\n" if ok else "0\n")
