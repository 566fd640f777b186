#!/usr/bin/env bash
# Builds and runs the whole test suite.
#
#   tools/test.sh          # Release build in build/
#   tools/test.sh asan     # AddressSanitizer + UBSan build in build-asan/
#   tools/test.sh tsan     # ThreadSanitizer build in build-tsan/
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

case "${1:-}" in
  "")
    build_dir=build
    args=(-DTOUCHSTONE_BUILD_TESTS=ON -DTOUCHSTONE_ASAN=OFF -DTOUCHSTONE_TSAN=OFF)
    ;;
  asan)
    build_dir=build-asan
    args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOUCHSTONE_BUILD_TESTS=ON -DTOUCHSTONE_ASAN=ON -DTOUCHSTONE_TSAN=OFF)
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    ;;
  tsan)
    build_dir=build-tsan
    args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOUCHSTONE_BUILD_TESTS=ON -DTOUCHSTONE_ASAN=OFF -DTOUCHSTONE_TSAN=ON)
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tools/tsan.supp}
    ;;
  *)
    echo "usage: tools/test.sh [asan|tsan]" >&2
    exit 1
    ;;
esac

tools/setup.sh "$build_dir" "${args[@]}"
# Two tests per host core in the Release build: a third of the suite's test-seconds are spent asleep
# (--perturb's random host delays, which tests/discovered_tests.cmake.in allows for) or waiting for
# child processes (mpirun, the split runs' windows), so one test per core leaves the cores idle that
# long. On 2 cores the suite took 521 s with -j2 and 354 to 400 s with -j4, every test passing. The
# sanitized builds keep one per core: their tests take several times the memory and CPU.
jobs=$(nproc)
[[ -z ${1:-} ]] && jobs=$((2 * jobs))
ctest --test-dir "$build_dir" --output-on-failure -j"$jobs"

# The package (docs/mpi.md, "Installing"): install to a temporary prefix, move it (the package is
# relocatable), then build examples/ as an outside project with find_package(Touchstone) and run
# the examples, the MPI one through the installed `touchstone mpirun` and the installed wrapper, the
# plug-in through the installed `touchstone sweep --plugin`.
if [[ -z ${1:-} ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cmake --install "$build_dir" --prefix "$tmp/installed" >/dev/null
  mv "$tmp/installed" "$tmp/prefix"
  cmake -S examples -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$tmp/examples" -j "$(nproc)" >/dev/null
  # Built outside against the installed package, they print exactly what they print in-tree.
  "$tmp/examples/example_ring" 2>&1 | diff examples/ring.out -
  "$tmp/examples/example_lock" 2>&1 | diff examples/lock.out -
  "$tmp/examples/example_sweep" 2>&1 | diff examples/sweep.out -  # Touchstone::experiment and ::algorithms
  "$tmp/prefix/bin/touchstone" mpirun --machine torus:4x4 "$tmp/examples/example_mpi_ring" 2>&1 | diff examples/mpi_ring.out -
  "$tmp/prefix/bin/touchstone-mpicc" -O2 examples/mpi_ring.c -o "$tmp/mpi_ring"
  "$tmp/prefix/bin/touchstone" mpirun --machine mesh:3x3 -np 7 "$tmp/mpi_ring"
  # A plug-in built outside (docs/extending.md), loaded by the installed touchstone: its radix-2
  # Bruck sends what the catalog's alltoall/bruck does, at every size.
  "$tmp/prefix/bin/touchstone" sweep --plugin "$tmp/examples/plugin_bruck.so" --machine mesh:4x4 \
    --algorithms alltoall/bruck,alltoall/my-bruck --sizes 16:256 --format csv 2>/dev/null >"$tmp/plugin.csv"
  diff <(grep ',alltoall/bruck,' "$tmp/plugin.csv" | cut -d, -f3,5,6) \
    <(grep ',alltoall/my-bruck,' "$tmp/plugin.csv" | cut -d, -f3,5,6)
  [[ $(grep -c ',alltoall/my-bruck,' "$tmp/plugin.csv") == 5 ]]
  echo "package: installed, relocated, examples built outside and run"
  # The fuzz harnesses: about a minute each under ASan + UBSan, in build-fuzz/ with
  # clang; skipped with a message when clang is absent. README.md ("Fuzzing") says how to run longer.
  tools/fuzz.sh "${TOUCHSTONE_FUZZ_SECONDS:-60}"
fi
