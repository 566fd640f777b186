#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang, ASan and UBSan (build-fuzz/), and runs
# each for SECONDS (default 60), one per host core at a time, from its seed corpus with its dictionary (README.md,
# "Fuzzing"). Skipped, with a message, when clang is absent.
#
#   tools/fuzz.sh                 # every harness, 60 s each (what CI runs)
#   tools/fuzz.sh 3600 machine_spec   # one harness, an hour
#
# New inputs the fuzzer finds go to build-fuzz/corpus/NAME (the seeds in the repository are not
# touched); a crash leaves its input in build-fuzz/crash-* and makes this script fail. The timeout
# per input is 60 s: a valid machine of millions of nodes takes over 10 s to build under ASan.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
seconds=${1:-60}
only=${2:-}

# clang 15 or later: the runtime uses std::source_location, which clang 14 cannot compile with
# Debian 12's libstdc++ (tools/setup.sh installs clang-16 and its libFuzzer, libclang-rt-16-dev).
cxx=
for c in clang++-16 clang++-17 clang++-15 clang++; do
  if command -v "$c" >/dev/null && [[ $("$c" -dumpversion | cut -d. -f1) -ge 15 ]]; then cxx=$c; break; fi
done
if [[ -z $cxx ]]; then
  echo "fuzz: no clang++ 15 or later found, fuzz harnesses skipped (apt-get install clang-16 libclang-rt-16-dev)" >&2
  exit 0
fi
cc=${cxx/clang++/clang}

cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DTOUCHSTONE_FUZZ=ON -DTOUCHSTONE_BUILD_TESTS=OFF -DTOUCHSTONE_BUILD_BENCHMARKS=OFF -DTOUCHSTONE_BUILD_EXAMPLES=OFF \
  >/dev/null
harnesses=(machine_spec machine_file switchnet traffic records)
[[ -n $only ]] && harnesses=("$only")
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_harness() {
  local h=$1 dict=tests/fuzz/machines.dict
  [[ $h == traffic ]] && dict=tests/fuzz/traffic.dict
  [[ $h == records ]] && dict=tests/fuzz/records.dict
  mkdir -p "build-fuzz/corpus/$h"
  (cd build-fuzz && "bin/fuzz_$h" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -timeout=60 \
     -print_final_stats=1 -dict="$root/$dict" "corpus/$h" "$root/tests/fuzz/corpus/$h") >"$root/build-fuzz/fuzz_$h.log" 2>&1
}
# In batches of one harness per host core (all run the same time); each still runs its full time.
cores=$(nproc)
failed=()
for ((i = 0; i < ${#harnesses[@]}; i += cores)); do
  batch=("${harnesses[@]:i:cores}")
  pids=()
  for h in "${batch[@]}"; do
    echo "fuzz: $h for ${seconds} s"
    run_harness "$h" &
    pids+=($!)
  done
  for k in "${!batch[@]}"; do
    h=${batch[k]}
    status=0
    wait "${pids[k]}" || status=$?
    echo "fuzz: $h:"
    grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|fuzz invariant)" \
      "build-fuzz/fuzz_$h.log" || true
    if [[ $status -ne 0 ]]; then
      echo "fuzz: $h found a problem (exit $status); the log is $root/build-fuzz/fuzz_$h.log, the input build-fuzz/crash-*" >&2
      failed+=("$h")
    fi
  done
done
((${#failed[@]} == 0)) || exit 1
echo "fuzz: every harness ran without finding anything"
