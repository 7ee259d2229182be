#!/usr/bin/env bash
# Builds tests/config/fuzz/config_fuzzer.cpp with clang (libFuzzer + AddressSanitizer) and runs it for
# a bounded time, seeded with the shipped configs and the malformed corpus.
#   run_fuzzer.sh SOURCE_DIR LIBSTEER WORK SECONDS [LINK_ITEM...]
# SOURCE_DIR: the repository; LIBSTEER: the built libsteer.a; WORK: a scratch folder (the
# objects, the growing corpus and any crash-* inputs stay there); SECONDS: fuzzing time;
# LINK_ITEMs: what else libsteer needs at link time (e.g. libcudart).
# The reader and parsers (src/config/*.cpp and each model folder's config_*.cpp and robot
# builder) are compiled with coverage and ASan; the rest of the library links as built.
# Exit 77 (ctest: skipped) when no clang++ with -fsanitize=fuzzer is found (Debian: clang).
# Environment: STEER_FUZZ_CXX (default clang++), STEER_FUZZ_JOBS (compile jobs, default 2),
# STEER_FUZZ_ARGS (more libFuzzer flags, e.g. -fork=8).
set -euo pipefail
if (($# < 4)); then
  echo "usage: run_fuzzer.sh SOURCE_DIR LIBSTEER WORK SECONDS [LINK_ITEM...]" >&2
  exit 2
fi
src=$1 lib=$2 work=$3 secs=$4
shift 4
cxx=${STEER_FUZZ_CXX:-clang++}
jobs=${STEER_FUZZ_JOBS:-2}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "config fuzzer: skipped, no $cxx (Debian package clang)"
  exit 77
fi
mkdir -p "$work/obj" "$work/corpus"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$work/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer,address "$work/probe.cpp" -o "$work/probe" >/dev/null 2>&1; then
  echo "config fuzzer: skipped, $cxx cannot build with -fsanitize=fuzzer,address"
  exit 77
fi

# the same floating-point and Eigen settings as the library (src/CMakeLists.txt), so that the
# inline code both copies hold is the same code
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address
       -ffp-contract=off -fno-math-errno -DEIGEN_DONT_PARALLELIZE -DSTEER_VERSION=\"fuzz\"
       -I"$src/include" -I"$src/src" -I/usr/include/eigen3)
sources=("$src"/src/config/*.cpp "$src"/src/models/*/config_*.cpp "$src"/src/models/mass_spring/mass_spring_robot.cpp)
objects=()
t0=$(date +%s)
# the sources in parallel, STEER_FUZZ_JOBS at a time
running=0
failed=0
for s in "${sources[@]}"; do
  o="$work/obj/$(echo "${s#"$src"/}" | tr '/' '_').o"
  objects+=("$o")
  "$cxx" "${flags[@]}" -c "$s" -o "$o" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
if ((failed)); then
  echo "config fuzzer: FAILED to compile the reader with $cxx"
  exit 1
fi
"$cxx" "${flags[@]}" -DSTEER_FUZZ_CONFIG_DIR=\""$src/configs"\" -c "$src/tests/config/fuzz/config_fuzzer.cpp" -o "$work/obj/harness.o"
"$cxx" -fsanitize=fuzzer,address "$work/obj/harness.o" "${objects[@]}" "$lib" "$@" -lgomp -lpthread -o "$work/config_fuzzer"
echo "config fuzzer: built in $(($(date +%s) - t0)) s"

# a dictionary of the keys and words the shipped configs use
grep -rhoE '"[A-Za-z_][A-Za-z0-9_.]*"' "$src/configs" "$src/docs/config.md" 2>/dev/null | sort -u |
  sed 's/"/\\"/g; s/^/"/; s/$/"/' >"$work/config.dict"
cd "$work"
set +e
# -rss_limit_mb: a parse that needs gigabytes is a finding too; -timeout: so is one that hangs
"$work/config_fuzzer" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -dict="$work/config.dict" \
  -artifact_prefix="$work/crash-" -print_final_stats=1 ${STEER_FUZZ_ARGS:-} \
  "$work/corpus" "$src/configs" "$src/tests/data/malformed" >"$work/fuzz.log" 2>&1
status=$?
if ((status != 0)); then
  tail -n 80 "$work/fuzz.log"
  echo "config fuzzer: FAILED (exit $status); the input is in $work/crash-* (the log in $work/fuzz.log)"
  exit 1
fi
grep -E "^(INFO: seed corpus|Done [0-9]+ runs|stat::)" "$work/fuzz.log"
echo "config fuzzer: no finding in $secs s"
