import os, subprocess, sys, zlib
build = subprocess.run(['gcc', '-O2', '-o', '/tmp/crc_bin', '/app/crc.c'], capture_output=True)
if build.returncode != 0:
    sys.exit(1)
samples = [b'123456789', b'', b'The quick brown fox', bytes(range(256)) * 3]
for i, data in enumerate(samples):
    p = f'/tmp/crc_sample_{i}'
    open(p, 'wb').write(data)
    out = subprocess.run(['/tmp/crc_bin', p], capture_output=True, text=True, timeout=5).stdout
    if out != '%08x\n' % zlib.crc32(data):
        sys.exit(1)
sys.exit(0)
