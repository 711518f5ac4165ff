import subprocess, sys
CASES = {
    "Hello World": "hello-world",
    "  Crème Brûlée -- Recipe!  ": "creme-brulee-recipe",
    "C'est la vie": "c-est-la-vie",
    "Ünïcödé   Tëst 2024": "unicode-test-2024",
    "already-a-slug": "already-a-slug",
    "___": "",
}
for text, want in CASES.items():
    r = subprocess.run([sys.executable, "-m", "slugkit", text], capture_output=True, text=True, timeout=10)
    got = r.stdout.rstrip("\n")
    if r.returncode != 0 or got != want:
        print(f"slugify({text!r}) -> {got!r} (rc {r.returncode}), want {want!r}")
        sys.exit(1)
print("ok")
