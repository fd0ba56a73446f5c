#!/usr/bin/env bash
# Builds the examples in Release and runs them; the images land in out/.
# Usage: scripts/demo.sh [size]   (default 1024)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-1024}
bash "$root/scripts/install-deps.sh" demo
cmake -S "$root" -B "$root/build/demo" -DCMAKE_BUILD_TYPE=Release \
  -DGORGE_BUILD_TESTS=OFF -DGORGE_BUILD_BENCHMARKS=OFF -DGORGE_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$root/build/demo" -j "$(nproc)"
mkdir -p "$root/out"
cd "$root/out"
"$root/build/demo/examples/demo" "$size"
for extra in island island_pipeline; do
  if [[ -x "$root/build/demo/examples/$extra" ]]; then "$root/build/demo/examples/$extra"; fi
done
echo "Images written to $root/out/"
