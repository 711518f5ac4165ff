#!/usr/bin/env bash
# Rebuilds the scene page's JavaScript from npm (frontend/scene/package.json, locked by
# package-lock.json): Three.js and its OrbitControls, bundled by esbuild into one minified IIFE
# in posttrain/tasks/scene/static/, which `posttrain scene render` inlines into each page. The
# result is committed, so a clone, an sdist and a wheel render offline without npm; run this
# only to change a dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
frontend=frontend/scene
static=posttrain/tasks/scene/static
(cd "$frontend" && npm ci --no-audit --no-fund --silent)
mkdir -p "$static"
"$frontend/node_modules/.bin/esbuild" "$frontend/entry.js" --bundle --format=iife --minify \
  --legal-comments=none --log-level=warning --outfile="$static/three-bundle.min.js"
cp "$frontend/node_modules/three/LICENSE" "$static/three.LICENSE"
echo "scene viewer assets: $(ls "$static" | tr '\n' ' ')"
