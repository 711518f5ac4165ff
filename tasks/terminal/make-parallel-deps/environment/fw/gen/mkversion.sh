#!/bin/sh
# usage: sh gen/mkversion.sh VERSION_FILE > build/version.h
# In CI this asks the release server for a build number, which takes a moment (simulated here).
sleep 0.4
v=$(cat "$1")
printf '#ifndef VERSION_H\n#define VERSION_H\n#define FW_VERSION "%s"\n#endif\n' "$v"
