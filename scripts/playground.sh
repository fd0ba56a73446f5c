#!/usr/bin/env bash
# Opens the live playground (web/index.html): serves the repository read-only on 127.0.0.1 with
# Node's built-in http module (no npm packages needed) and prints the URL to open in a browser
# with WebGPU or WebGL2. Usage: bash scripts/playground.sh [--port N]   (default 8123; Ctrl-C stops)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v node >/dev/null || { echo "scripts/playground.sh: needs Node.js (Debian: nodejs)" >&2; exit 1; }
exec node "$root/web/serve.mjs" --root "$root" "$@"
