#!/bin/bash
cat > /app/units.py <<'EOF'
_MM = {'mm': 1.0, 'cm': 10.0, 'm': 1000.0, 'km': 1e6, 'in': 25.4, 'ft': 25.4 * 12, 'mi': 25.4 * 12 * 5280}


def convert(value, src, dst):
    if src not in _MM or dst not in _MM:
        raise ValueError(f'unknown unit: {src!r} or {dst!r}')
    return value * _MM[src] / _MM[dst]
EOF
