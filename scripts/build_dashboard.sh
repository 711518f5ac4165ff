#!/usr/bin/env bash
# Rebuilds the dashboard's vendored JavaScript from npm (dashboard/frontend/package.json, locked
# by package-lock.json) into posttrain/dashboard/static/vendor/. The result is committed, so a
# clone, an sdist and a wheel work offline without npm; run this only to change a dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
frontend=dashboard/frontend
vendor=posttrain/dashboard/static/vendor
(cd "$frontend" && npm ci --no-audit --no-fund --silent)
mkdir -p "$vendor"
cp "$frontend/node_modules/uplot/dist/uPlot.iife.min.js" "$vendor/uPlot.iife.min.js"
cp "$frontend/node_modules/uplot/dist/uPlot.min.css" "$vendor/uPlot.min.css"
cp "$frontend/node_modules/uplot/LICENSE" "$vendor/uPlot.LICENSE"
echo "dashboard assets: $(ls "$vendor" | tr '\n' ' ')"
