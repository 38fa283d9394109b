#!/usr/bin/env bash
# Second command on a fresh Debian 12 machine (and what CI runs):
#   installs the prerequisites, builds the release driver, writes target/release/softcl.icd,
#   then checks formatting, runs the whole test suite against the driver through the
#   system ICD loader, a bounded differential fuzz run (scripts/fuzz.sh) and clippy. Every
#   check runs even when an earlier one failed; the exit status is non-zero if any failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/install-deps.sh
source scripts/install-deps.sh
# shellcheck source=scripts/common.sh
source scripts/common.sh

failed=()
run_check() {
    local name=$1
    shift
    softcl_step "$name: $*"
    if "$@"; then
        echo "[softcl] $name: ok"
    else
        echo "[softcl] $name: FAILED"
        failed+=("$name")
    fi
}

softcl_step "prerequisites"
softcl_install_deps || exit 1

run_check fmt cargo fmt --all -- --check

softcl_step "build the release driver: cargo build --release -p softcl-icd"
if ! cargo build --release -p softcl-icd; then
    echo "[softcl] the driver does not build: tests cannot run"
    failed+=(build)
fi

passed_total=0
failed_total=0
if [ "${#failed[@]}" -eq 0 ] || [ "${failed[*]}" = "fmt" ]; then
    softcl_write_icd || failed+=(icd)
    export OCL_ICD_VENDORS="$SOFTCL_ICD_FILE"
    log="$SOFTCL_TARGET_DIR/softcl-test.log"
    softcl_step "tests: OCL_ICD_VENDORS=$OCL_ICD_VENDORS cargo test --workspace --release"
    if cargo test --workspace --release --no-fail-fast 2>&1 | tee "$log"; then
        echo "[softcl] tests: ok"
    else
        echo "[softcl] tests: FAILED"
        failed+=(tests)
    fi
    # Sum cargo's "test result:" lines for one closing summary line.
    read -r passed_total failed_total < <(awk '/^test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) ~ /^passed;/) p += $i
                if ($(i + 1) ~ /^failed;/) f += $i
            }
        } END { print p + 0, f + 0 }' "$log")
    # A test binary that crashed (a signal) printed no "test result:" line: count it.
    crashed=$(grep -c "process didn't exit successfully: .*(signal:" "$log")
    if [ "$crashed" -gt 0 ]; then
        echo "[softcl] $crashed test binaries crashed (counted as failed tests below)"
        failed_total=$((failed_total + crashed))
    fi
    # The conformance tests again with the CPU device's vectorizer off: every kernel must
    # give the same results scalar; the first run had it on (the default).
    log_scalar="$SOFTCL_TARGET_DIR/softcl-test-scalar.log"
    softcl_step "tests, vectorizer off: CL_CONFIG_USE_VECTORIZER=False cargo test --release -p softcl-conformance"
    if CL_CONFIG_USE_VECTORIZER=False cargo test --release -p softcl-conformance --no-fail-fast 2>&1 | tee "$log_scalar"; then
        echo "[softcl] tests (vectorizer off): ok"
    else
        echo "[softcl] tests (vectorizer off): FAILED"
        failed+=(tests-scalar)
    fi
    read -r p2 f2 < <(awk '/^test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) ~ /^passed;/) p += $i
                if ($(i + 1) ~ /^failed;/) f += $i
            }
        } END { print p + 0, f + 0 }' "$log_scalar")
    passed_total=$((passed_total + p2))
    failed_total=$((failed_total + f2))
    # A bounded differential fuzz run (about 4 minutes on two cores): fixed seeds, every
    # configuration against the scalar run; the seeds are a run that passes while the
    # defects of conformance/fuzz-corpus/pending are open (widen it when they are fixed).
    # PoCL is advisory: a kernel that differs on PoCL alone is printed, not failed (PoCL
    # 3.1's own defects, such as sub_sat of (int)abs(INT_MIN), are triaged by hand).
    run_check fuzz bash scripts/fuzz.sh --seed 31 --count 11 --no-reduce --quiet --advisory pocl
fi

run_check clippy cargo clippy --workspace --all-targets -- -D warnings

echo
if [ "${#failed[@]}" -eq 0 ]; then
    echo "[softcl] all checks passed (fmt, build, tests, fuzz, clippy)"
else
    echo "[softcl] FAILED checks: ${failed[*]}"
fi
echo "tests: ${passed_total} passed, ${failed_total} failed"
[ "${#failed[@]}" -eq 0 ]
