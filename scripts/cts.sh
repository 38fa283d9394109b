#!/usr/bin/env bash
# Runs suites of an already built Khronos OpenCL CTS on one SoftCL device, through the
# system ICD loader with only SoftCL visible, and prints a table
#
#     suite | passed / total | time | result
#
# Usage:
#   bash scripts/cts.sh --build <CTS build dir> [--device cpu|gpu] [--suites api,basic,...]
#        [--time-limit MINUTES] [--out DIR] [--no-wimpy] [--list] [--args "SUB-TEST ..."]
#        [--driver LIB]
#
#   --build       the CTS build tree (its test_<suite> binaries are found under it). The CTS
#                 is not part of SoftCL and this script does not build it: see
#                 docs/CONFORMANCE.md.
#   --device      cpu (CL_DEVICE_TYPE_CPU, default) or gpu (the modelled Gen device).
#   --suites      comma-separated suite names (default: the fast ones, see FAST_SUITES);
#                 "all" runs every suite found in the build tree.
#   --time-limit  minutes per suite before it is stopped (default 15).
#   --out         where per-suite results go (default target/cts/<device>): <suite>.json
#                 (the CTS's CL_CONFORMANCE_RESULTS_FILENAME: sub-test -> pass/fail/skip),
#                 <suite>.log (the full output) and summary.md (the table).
#   --no-wimpy    run the full-size tests (default is CL_WIMPY_MODE=1, plus -w for the
#                 suites that take it).
#   --list        print the suites found in the build tree and exit.
#   --args        arguments for every suite binary, e.g. the names of the sub-tests to run
#                 (to step around a crash, or to finish a suite that ran out of time).
#   --driver      a libsoftcl.so to test as it is (an installed one, or a copy kept while
#                 the tree changes); default: build this tree's and test that.
#
# A suite that crashes or reaches the time limit writes no JSON: its row counts the
# "<sub-test> passed" / "<sub-test> FAILED" lines of its log instead and says why it stopped.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/install-deps.sh
source "$REPO/scripts/install-deps.sh"

FAST_SUITES=api,compiler,printf,spirv_new,events,profiling,multiples,atomics,buffers,commonfns,relationals,geometrics,integer_ops

BUILD=""
DEVICE=cpu
SUITES=$FAST_SUITES
LIMIT_MIN=15
OUT=""
WIMPY=1
LIST=0
ARGS=""
DRIVER=""

usage() { sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=$2; shift 2 ;;
        --device) DEVICE=$2; shift 2 ;;
        --suites) SUITES=$2; shift 2 ;;
        --time-limit) LIMIT_MIN=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --no-wimpy) WIMPY=0; shift ;;
        --list) LIST=1; shift ;;
        --args) ARGS=$2; shift 2 ;;
        --driver) DRIVER=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "error: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
done

if [ -z "$BUILD" ] || [ ! -d "$BUILD" ]; then
    echo "error: --build <CTS build dir> is required and must exist" >&2
    exit 2
fi
BUILD=$(cd "$BUILD" && pwd)
case "$DEVICE" in
    cpu) CL_TYPE=CL_DEVICE_TYPE_CPU ;;
    gpu) CL_TYPE=CL_DEVICE_TYPE_GPU ;;
    *) echo "error: --device must be cpu or gpu" >&2; exit 2 ;;
esac
if ! [[ "$LIMIT_MIN" =~ ^[0-9]+$ ]] || [ "$LIMIT_MIN" -eq 0 ]; then
    echo "error: --time-limit must be a positive number of minutes" >&2
    exit 2
fi

# The binary of a suite: test_<suite>, except where the CTS names it otherwise.
binary_name() {
    case "$1" in
        math_brute_force|bruteforce) echo test_bruteforce ;;
        *) echo "test_$1" ;;
    esac
}

find_binary() {
    find "$BUILD" -type f -perm -u+x -name "$(binary_name "$1")" -not -path '*/CMakeFiles/*' 2>/dev/null | head -n 1
}

if [ "$LIST" -eq 1 ]; then
    find "$BUILD" -type f -perm -u+x -name 'test_*' -not -path '*/CMakeFiles/*' -printf '%f\n' \
        | sed 's/^test_//; s/^bruteforce$/math_brute_force/' | sort
    exit 0
fi
if [ "$SUITES" = all ]; then
    SUITES=$(find "$BUILD" -type f -perm -u+x -name 'test_*' -not -path '*/CMakeFiles/*' -printf '%f\n' \
        | sed 's/^test_//; s/^bruteforce$/math_brute_force/' | sort | paste -sd, -)
fi

# Prerequisites: the ICD loader and Python (for the results JSON), from the same package
# list as the rest of SoftCL; then the driver itself.
softcl_install_deps || exit 1
for p in python3 timeout; do
    command -v "$p" >/dev/null || { echo "error: $p is needed" >&2; exit 1; }
done
if [ -n "$DRIVER" ]; then
    [ -f "$DRIVER" ] || { echo "error: --driver $DRIVER: no such file" >&2; exit 2; }
    LIB=$(cd "$(dirname "$DRIVER")" && pwd)/$(basename "$DRIVER")
    ICD=$(mktemp --suffix=.icd)
    trap 'rm -f "$ICD"' EXIT
else
    LIB="$REPO/target/release/libsoftcl.so"
    softcl_log "building the driver (cargo build --release -p softcl-icd)"
    (cd "$REPO" && cargo build --release -p softcl-icd) || exit 1
    ICD="$REPO/target/release/softcl.icd"
fi
echo "$LIB" > "$ICD"

OUT=${OUT:-$REPO/target/cts/$DEVICE}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# Only SoftCL is visible: the loader reads this one .icd file and nothing from
# /etc/OpenCL/vendors.
export OCL_ICD_VENDORS="$ICD"
unset OCL_ICD_FILENAMES OPENCL_LAYERS 2>/dev/null || true
export CL_DEVICE_TYPE=$CL_TYPE
if [ "$WIMPY" -eq 1 ]; then export CL_WIMPY_MODE=1; else unset CL_WIMPY_MODE; fi

# Counts a suite's results: "passed failed skipped" from its JSON, else from its log.
count_results() {
    python3 - "$1" "$2" <<'PY'
import json, re, sys
json_path, log_path = sys.argv[1], sys.argv[2]
try:
    with open(json_path) as f:
        results = json.load(f)["results"]
    vals = list(results.values())
    print(vals.count("pass"), vals.count("fail"), vals.count("skip"), "json")
except Exception:
    passed = failed = skipped = 0
    try:
        with open(log_path, errors="replace") as f:
            for line in f:
                line = line.rstrip()
                if re.match(r"^\S+ passed$", line):
                    passed += 1
                elif re.match(r"^\S+ FAILED$", line):
                    failed += 1
                elif re.match(r"^\S+ (test not supported|skipped.*)$", line):
                    skipped += 1
    except OSError:
        pass
    print(passed, failed, skipped, "log")
PY
}

# The failed sub-tests of a suite (from its JSON, else its log), comma-separated.
failed_names() {
    python3 - "$1" "$2" <<'PY'
import json, re, sys
try:
    with open(sys.argv[1]) as f:
        r = json.load(f)["results"]
    print(",".join(k for k, v in r.items() if v == "fail"))
except Exception:
    try:
        with open(sys.argv[2], errors="replace") as f:
            print(",".join(m.group(1) for m in (re.match(r"^(\S+) FAILED$", l.rstrip()) for l in f) if m))
    except OSError:
        print("")
PY
}

SUMMARY="$OUT/summary.md"
{
    echo "# CTS on SoftCL ($DEVICE device$([ "$WIMPY" -eq 1 ] && echo ", wimpy"))"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), build $BUILD, driver $LIB, time limit ${LIMIT_MIN} min per suite"
    echo
    echo "| suite | passed / total | skipped | time | result |"
    echo "|---|---|---|---|---|"
} > "$SUMMARY"
printf '%-18s | %-15s | %-7s | %-7s | %s\n' suite "passed / total" skipped time result

IFS=, read -r -a suite_list <<< "$SUITES"
overall=0
for suite in "${suite_list[@]}"; do
    [ -n "$suite" ] || continue
    bin=$(find_binary "$suite")
    if [ -z "$bin" ]; then
        printf '%-18s | %-15s | %-7s | %-7s | %s\n' "$suite" "-" "-" "-" "not built"
        echo "| $suite | - | - | - | not built |" >> "$SUMMARY"
        overall=1
        continue
    fi
    json="$OUT/$suite.json"
    log="$OUT/$suite.log"
    rm -f "$json"
    extra=()
    # Word splitting is wanted: --args is a list of names.
    # shellcheck disable=SC2206
    [ -n "$ARGS" ] && extra+=($ARGS)
    if [ "$WIMPY" -eq 1 ]; then
        case "$suite" in conversions|math_brute_force|bruteforce) extra+=(-w) ;; esac
    fi
    # test_conversions puts the wildcard "all" last on its command line, which its harness
    # then reads as the device type CL_DEVICE_TYPE_ALL, whatever CL_DEVICE_TYPE says (and a
    # device word on the command line is taken for a conversion's name). Among all of
    # SoftCL's devices the CPU device is index 0 and the Gen device index 1: pick by index
    # (the device check below catches a change of that order).
    index_env=()
    if [ "$suite" = conversions ]; then
        if [ "$DEVICE" = gpu ]; then index_env=(CL_DEVICE_INDEX=1); else index_env=(CL_DEVICE_INDEX=0); fi
    fi
    start=$(date +%s)
    # Each suite runs from its own folder (some read files next to the binary).
    (cd "$(dirname "$bin")" && env "${index_env[@]}" CL_CONFORMANCE_RESULTS_FILENAME="$json" \
        timeout -k 10 "${LIMIT_MIN}m" "./$(basename "$bin")" "${extra[@]}") > "$log" 2>&1
    code=$?
    secs=$(( $(date +%s) - start ))
    read -r passed failed skipped source < <(count_results "$json" "$log")
    total=$((passed + failed))
    case "$code" in
        0) result="ok" ;;
        124|137) result="time limit (${LIMIT_MIN} min), counted from the log" ;;
        *) if [ "$source" = log ]; then result="exit $code (crash?), counted from the log"; else result="exit $code"; fi ;;
    esac
    # The device the suite really ran on, from the harness's log: a suite that ignores
    # CL_DEVICE_TYPE must not be counted for the wrong device.
    ran_on=$(grep -m1 -o 'Device Name: .*' "$log" | sed 's/^Device Name: //')
    case "$DEVICE:$ran_on" in
        gpu:*Gen*|gpu:*Graphics*|gpu:"") ;;
        gpu:*) result="$result; ran on the wrong device: $ran_on"; code=1 ;;
        cpu:*Gen*|cpu:*Graphics*) result="$result; ran on the wrong device: $ran_on"; code=1 ;;
    esac
    fails=$(failed_names "$json" "$log")
    [ -n "$fails" ] && result="$result; failed: $fails"
    [ "$code" -eq 0 ] || overall=1
    printf '%-18s | %-15s | %-7s | %-7s | %s\n' "$suite" "$passed / $total" "$skipped" "${secs}s" "$result"
    echo "| $suite | $passed / $total | $skipped | ${secs} s | $result |" >> "$SUMMARY"
done
softcl_log "results: $OUT (summary.md, <suite>.json, <suite>.log)"
exit $overall
