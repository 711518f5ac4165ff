from pathlib import Path

script = r'''#!/bin/sh
# Generate /app/out/config.json from services.txt ("name port [replicas]" per line, # comments)
set -e
cd "$(dirname "$0")"
mkdir -p /app/out
services=()
while read -r name port replicas; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    services+=("{\"name\": \"$name\", \"port\": $port, \"replicas\": ${replicas:-1}}")
done < services.txt
printf '{"services": [%s]}\n' "$(IFS=,; echo "${services[*]}")" > /app/out/config.json
echo "wrote ${#services[@]} services"
'''
services = """# name   port  replicas
web      8080  3
api      9000
# worker is internal
worker   7000  2

metrics  9100  1
"""
Path("/app/scripts").mkdir(parents=True, exist_ok=True)
Path("/app/scripts/setup.sh").write_bytes(script.replace("\n", "\r\n").encode())
Path("/app/scripts/setup.sh").chmod(0o644)
Path("/app/scripts/services.txt").write_bytes(services.replace("\n", "\r\n").encode())
