#!/usr/bin/env bash
# Installs the Debian packages gorge needs that are missing, and nothing else.
#   scripts/install-deps.sh demo   compiler, CMake, glm, stb, xsimd
#   scripts/install-deps.sh test   the above plus Catch2, Google Benchmark, glslang and Vulkan (lavapipe),
#                                  the codecs of gorge::io: libspng, tinyexr and GDAL, and the
#                                  gorge command line's CLI11 and nlohmann-json; for the WGSL test,
#                                  Node.js, Chromium and web/'s npm packages (`npm ci`, lockfile)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

profile=${1:-test}
packages=(build-essential cmake libglm-dev libstb-dev libxsimd-dev)
if [[ $profile == test ]]; then
  packages+=(catch2 libbenchmark-dev glslang-tools libvulkan-dev mesa-vulkan-drivers libspng-dev libtinyexr-dev libgdal-dev
    libcli11-dev nlohmann-json3-dev nodejs chromium libopenmpi-dev openmpi-bin)
elif [[ $profile != demo ]]; then
  echo "install-deps.sh: unknown profile '$profile' (expected demo or test)" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Some Node.js packages (NodeSource's) bring npm along; Debian's does not.
[[ $profile == test ]] && ! command -v npm >/dev/null && missing+=(npm)
# puppeteer-core (pinned by web/package-lock.json; it downloads no browser) into web/node_modules.
web_packages() {
  [[ $profile == test && ! -d "$root/web/node_modules/puppeteer-core" ]] || return 0
  echo "Installing web/'s npm packages (npm ci)"
  (cd "$root/web" && npm ci --no-audit --no-fund >/dev/null)
}
[[ ${#missing[@]} -eq 0 ]] && { web_packages; exit 0; }

echo "Installing missing Debian packages: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    echo "install-deps.sh: not root and no sudo; please install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
web_packages
