#!/usr/bin/env bash
# The differential fuzzer: builds the driver and softcl-fuzz when needed, points the ICD
# loader at this build (target/release/softcl.icd) and runs softcl-fuzz, which generates
# random UB-free OpenCL C kernels, runs each on the CPU device scalar (the reference), at
# its heuristic width and at 4, 8 and 16 lanes, and on the Gen device at SIMD8, 16 and 32
# (and on PoCL when it is installed, on Intel's CPU runtime when SOFTCL_FUZZ_INTEL_ICD names
# its .icd file), compares every result with the scalar one, and
# prints and reduces the kernels that differ, crash, hang or fail to build.
#
#   bash scripts/fuzz.sh [--minutes N] [--seed S] [--count K] [softcl-fuzz options]
#
# Other options: --jobs J (children at once, default 2), --timeout SECS (per child),
# --without FEATURE,... (generate no such code), --configs NAME,..., --no-reduce,
# --reduce-limit N, --advisory NAME,... (failures there alone leave the exit status 0),
# --out DIR (default target/fuzz), --quiet; `--file KERNEL.cl` runs one
# kernel file (a corpus entry) everywhere. `--driver LIB` (this script's own option) tests
# that driver library as it is instead of building one: a copy, so that a long run never
# loads a library being rebuilt. Exit status 1 when a kernel failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

driver=
args=()
while [ $# -gt 0 ]; do
    if [ "$1" = --driver ] && [ $# -ge 2 ]; then
        driver=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
        shift 2
    else
        args+=("$1")
        shift
    fi
done

cargo build --release -p softcl-conformance --bin softcl-fuzz
if [ -n "$driver" ]; then
    mkdir -p "$SOFTCL_TARGET_DIR/fuzz"
    printf '%s\n' "$driver" >"$SOFTCL_TARGET_DIR/fuzz/driver.icd"
    export OCL_ICD_VENDORS="$SOFTCL_TARGET_DIR/fuzz/driver.icd"
else
    cargo build --release -p softcl-icd
    softcl_write_icd >/dev/null
    export OCL_ICD_VENDORS="$SOFTCL_ICD_FILE"
fi
exec "$SOFTCL_TARGET_DIR/release/softcl-fuzz" "${args[@]}"
