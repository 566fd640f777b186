#!/usr/bin/env bash
# Installs Chrome DevTools' own trace engine (front_end/models/trace of the chrome-devtools-frontend
# npm package, the code that reads a trace into the Performance panel) as one ES module that node
# can load: DIR/trace_engine.mjs. The package ships TypeScript sources; esbuild (npm) bundles them.
# The one generated file the sources need, core/i18n/locales.js, is written here for en-US as
# DevTools' own build (core/i18n/generate-locales-js.js) writes it.
#
#   tests/trace_engine/install.sh DIR
#
# Used by tools/setup.sh; the test TraceViewers.ChromeTraceEngine (tests/trace_engine/) is skipped
# when DIR/trace_engine.mjs or node is missing.
set -euo pipefail
dir=${1:?usage: install.sh DIR}
# Pinned: the engine's API (Model.createWithAllHandlers, parsedTrace().data) changes between releases.
devtools=chrome-devtools-frontend@1.0.1705227
esbuild=esbuild@0.28.2
mkdir -p "$dir"
cd "$dir"
[[ -f trace_engine.mjs ]] && exit 0
[[ -f package.json ]] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --silent "$devtools" "$esbuild"
src=node_modules/chrome-devtools-frontend/front_end
cat > "$src/core/i18n/locales.js" <<'JS'
export const LOCALES = ['en-US'];
export const BUNDLED_LOCALES = ['en-US'];
export const DEFAULT_LOCALE = 'en-US';
export const REMOTE_FETCH_PATTERN = '';
export const LOCAL_FETCH_PATTERN = './locales/@LOCALE@.json';
JS
echo "export * as Trace from './$src/models/trace/trace.js';" > entry.ts
node_modules/.bin/esbuild entry.ts --bundle --platform=node --format=esm --log-level=warning --outfile=trace_engine.mjs.tmp
mv trace_engine.mjs.tmp trace_engine.mjs
echo "trace engine: $dir/trace_engine.mjs"
