#!/usr/bin/env python3
"""Validate service ini files: every section needs host and an integer port 1-65535, ports unique."""
import configparser
import sys

ok = True
seen = {}
for path in sys.argv[1:]:
    cp = configparser.ConfigParser()
    cp.read(path)
    for sec in cp.sections():
        host = cp[sec].get("host", "").strip()
        port = cp[sec].get("port", "").strip()
        if not host:
            print(f"{path}:[{sec}] missing host"); ok = False
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            print(f"{path}:[{sec}] bad port {port!r}"); ok = False
            continue
        if port in seen:
            print(f"{path}:[{sec}] port {port} already used by [{seen[port]}]"); ok = False
        seen[port] = sec
sys.exit(0 if ok else 1)
