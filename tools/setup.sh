#!/usr/bin/env bash
# Installs the Debian 12 packages Touchstone needs (only those missing), then configures and builds.
#
#   tools/setup.sh                          # Release build in build/
#   tools/setup.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOUCHSTONE_ASAN=ON
#
# Usage: tools/setup.sh [BUILD_DIR [EXTRA_CMAKE_ARGS...]]. BUILD_DIR is relative to the repository
# root; extra arguments come after the defaults, so they override them.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build_dir=${1:-build}
[[ $# -gt 0 ]] && shift

packages=(build-essential cmake libtbb-dev libboost-dev libboost-context-dev libgtest-dev libgmock-dev
          libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev libcsv-dev
          python3-matplotlib
          pkg-config libdw-dev  # elfutils' libdw: source lines of reports and stacks (touchstone/source_lines.hpp)
          libjemalloc-dev  # the heap of the CLI, the paper programs and the benchmarks (cli/heap.cpp)
          openmpi-bin libopenmpi-dev  # touchstone-distributed: one emulation over several processes
          clang-16 libclang-rt-16-dev)  # libFuzzer for tests/fuzz (tools/fuzz.sh); the rest builds with g++
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

sudo=()
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: not root and sudo is not available; install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Node and npm only for the test of Chrome's trace engine (tests/trace_engine/), so optional: a
# machine may already have them from elsewhere (NodeSource's nodejs bundles npm and conflicts with
# Debian's npm package), and a failed install only skips that test.
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "setup: installing nodejs npm (optional)" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm ||
    echo "setup: WARNING: could not install nodejs and npm; TraceViewers.ChromeTraceEngine will be skipped" >&2
fi

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"
# Chrome DevTools' trace engine from npm, for the test TraceViewers.ChromeTraceEngine (skipped
# without it: a machine without the npm registry still builds and tests the rest).
tests/trace_engine/install.sh "$build_dir/trace_engine" ||
  echo "setup: WARNING: could not install Chrome's trace engine; TraceViewers.ChromeTraceEngine will be skipped" >&2
cmake --build "$build_dir" -j "$(nproc)"
