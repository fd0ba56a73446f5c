#!/usr/bin/env bash
# Builds and runs gorge's whole test suite twice: a Release build (tests, examples and benchmarks
# compiled; ctest run), then a Debug build with AddressSanitizer and UndefinedBehaviorSanitizer.
# Installs missing Debian packages first. The GPU parity test runs on Mesa's lavapipe (a CPU
# Vulkan driver) and must not skip: GORGE_REQUIRE_VULKAN turns a missing device into a failure.
# Last, the multithreaded tests (tiles, thread pools, parallel droplet and thermal erosion,
# landscape evolution) run under ThreadSanitizer.
# Every optional part is asked for explicitly (ON), so a missing dependency fails the run instead
# of being skipped (GORGE_REQUIRE_BROWSER: the WGSL test in headless Chromium).
# Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
bash "$root/scripts/install-deps.sh" test

echo "== Release build and tests"
cmake -S "$root" -B "$root/build/release" -DCMAKE_BUILD_TYPE=Release \
  -DGORGE_BUILD_TESTS=ON -DGORGE_BUILD_EXAMPLES=ON -DGORGE_BUILD_BENCHMARKS=ON -DGORGE_USE_XSIMD=ON \
  -DGORGE_BUILD_IO=ON -DGORGE_IO_USE_GDAL=ON -DGORGE_BUILD_CLI=ON -DGORGE_BUILD_MPI=ON \
  -DGORGE_REQUIRE_VULKAN=ON -DGORGE_REQUIRE_BROWSER=ON >/dev/null
cmake --build "$root/build/release" -j "$jobs"
ctest --test-dir "$root/build/release" --output-on-failure -j "$jobs"

if [[ ${1:-} != --no-sanitize ]]; then
  echo "== Debug build with -fsanitize=address,undefined and tests"
  san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake -S "$root" -B "$root/build/sanitize" -DCMAKE_BUILD_TYPE=Debug \
    -DGORGE_BUILD_TESTS=ON -DGORGE_BUILD_EXAMPLES=OFF -DGORGE_BUILD_BENCHMARKS=OFF -DGORGE_USE_XSIMD=ON \
    -DGORGE_BUILD_IO=ON -DGORGE_IO_USE_GDAL=ON -DGORGE_BUILD_CLI=ON -DGORGE_BUILD_MPI=ON \
    -DGORGE_REQUIRE_VULKAN=ON -DGORGE_REQUIRE_BROWSER=ON \
    "-DCMAKE_CXX_FLAGS=$san" "-DCMAKE_EXE_LINKER_FLAGS=$san" >/dev/null
  cmake --build "$root/build/sanitize" -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$root/build/sanitize" --output-on-failure -j "$jobs"

  echo "== Multithreaded tests with -fsanitize=thread"
  tsan="-fsanitize=thread -fno-omit-frame-pointer"
  cmake -S "$root" -B "$root/build/tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGORGE_BUILD_TESTS=ON -DGORGE_BUILD_EXAMPLES=OFF -DGORGE_BUILD_BENCHMARKS=OFF -DGORGE_INSTALL=OFF \
    "-DCMAKE_CXX_FLAGS=$tsan" "-DCMAKE_EXE_LINKER_FLAGS=$tsan" >/dev/null
  cmake --build "$root/build/tsan" -j "$jobs" --target gorge_test_droplet gorge_test_thermal gorge_test_tile gorge_test_thread_pool \
    gorge_test_thread_pool_std_thread gorge_test_readme gorge_test_evolution gorge_test_drainage
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir "$root/build/tsan" --output-on-failure -j "$jobs" \
    -R '^(droplet|thermal|tile|thread_pool|thread_pool_std_thread|readme|evolution|drainage)$'
fi
echo "All gorge tests passed."
