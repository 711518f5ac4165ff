import itertools, subprocess, sys
if subprocess.run(['gcc', '-O2', '-o', '/tmp/rle_check_bin', '/app/rle.c'], capture_output=True).returncode:
    sys.exit(1)
cases = ['', 'z', 'zzzzzzzzzzzz', 'abab', 'xxyyyzzzzq', 'q' * 1000 + 'r', '!!??  ..']
for s in cases:
    want = ''.join(f'{k}{len(list(g))}' for k, g in itertools.groupby(s)) + '\n'
    r = subprocess.run(['/tmp/rle_check_bin'], input=s, capture_output=True, text=True, timeout=5)
    if r.stdout != want:
        sys.exit(1)
sys.exit(0)
