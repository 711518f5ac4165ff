#!/bin/bash
python3 - <<'EOF'
conf = open('/app/service.conf').read().splitlines()
over = [l.split('=', 1) for l in open('/app/overrides.env').read().splitlines() if '=' in l]
idx = {}
for i, l in enumerate(conf):
    if l and not l.startswith('#') and '=' in l:
        idx[l.split('=', 1)[0]] = i
for k, v in over:
    if k in idx:
        conf[idx[k]] = f'{k}={v}'
    else:
        conf.append(f'{k}={v}')
open('/app/service.conf', 'w').write('\n'.join(conf) + '\n')
EOF
