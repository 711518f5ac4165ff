#!/usr/bin/env bash
# Rebuilds the package's JavaScript from npm (frontend/package.json, locked by package-lock.json):
# the dashboard's uPlot, copied into posttrain/dashboard/static/vendor/, and the scene page's
# Three.js with its OrbitControls, bundled by esbuild into one minified IIFE in
# posttrain/tasks/scene/static/ (`posttrain scene render` inlines it into each page). The result is
# committed, so a clone, an sdist and a wheel work offline without npm; run this only to change a
# dependency.
set -euo pipefail
cd "$(dirname "$0")/../frontend"
npm ci --no-audit --no-fund --silent
npm run --silent build
echo "dashboard assets: $(ls ../posttrain/dashboard/static/vendor | tr '\n' ' ')"
echo "scene viewer assets: $(ls ../posttrain/tasks/scene/static | tr '\n' ' ')"
