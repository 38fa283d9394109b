#!/usr/bin/env bash
# Runs pyopencl's own test suite on one SoftCL device through the system ICD loader.
#
#   scripts/pyopencl.sh [DEVICE] [pytest args...]
#
# DEVICE is a PYOPENCL_TEST selector: "SoftCL:0" (the CPU device, the default) or
# "SoftCL:1" (the modelled Gen GPU). Extra arguments go to pytest (e.g. a test file name
# such as test_array.py, or -k FILTER).
#
# Environment:
#   PYOCL_VENV   the venv to create/use (default: target/pyopencl/venv)
#   PYOCL_VER    the pyopencl version (default: whatever the venv has, else the newest)
#   PYOCL_TIMEOUT per-test timeout in seconds (default 600)
#
# The venv gets pyopencl, pytest, numpy, pytest-timeout and mako; the tests come from the
# matching source distribution (pip download needs scikit-build-core and nanobind in the
# venv to read the sdist's metadata). Each run uses a fresh XDG_CACHE_HOME so that no
# kernel binary cached by an earlier driver build is reused. Prints the passed/failed
# counts; the exit status is pytest's.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh

DEVICE=${1:-SoftCL:0}
[ $# -gt 0 ] && shift
WORK="$SOFTCL_TARGET_DIR/pyopencl"
VENV=${PYOCL_VENV:-$WORK/venv}
TIMEOUT=${PYOCL_TIMEOUT:-600}
mkdir -p "$WORK"

softcl_step "venv: $VENV"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" || exit 1
fi
"$VENV/bin/pip" install -q "pyopencl${PYOCL_VER:+==$PYOCL_VER}" \
    pytest numpy pytest-timeout mako scikit-build-core nanobind || exit 1
VER=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pyopencl"))') || exit 1
echo "[softcl] pyopencl $VER"

TESTS="$WORK/pyopencl-$VER/test"
if [ ! -d "$TESTS" ]; then
    softcl_step "fetch the pyopencl $VER sdist for its tests"
    (cd "$WORK" && "$VENV/bin/pip" download -q --no-deps --no-binary :all: \
        --no-build-isolation "pyopencl==$VER") || exit 1
    tar -xzf "$WORK/pyopencl-$VER.tar.gz" -C "$WORK" || exit 1
fi

softcl_step "build the release driver"
cargo build --release -p softcl-icd || exit 1
softcl_write_icd || exit 1

# A scratch copy of the tests: pytest writes next to them.
RUN=$(mktemp -d)
CACHE=$(mktemp -d)
trap 'rm -rf "$RUN" "$CACHE"' EXIT
cp -r "$TESTS"/. "$RUN"/

softcl_step "pytest on $DEVICE"
LOG="$WORK/pytest-${DEVICE//[^A-Za-z0-9]/_}.log"
(cd "$RUN" && OCL_ICD_VENDORS="$SOFTCL_ICD_FILE" PYOPENCL_TEST="$DEVICE" \
    XDG_CACHE_HOME="$CACHE" "$VENV/bin/pytest" -q -rfEs --timeout "$TIMEOUT" \
    -p no:cacheprovider "$@") 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}

# pytest -q ends with e.g. "1 failed, 290 passed, 17 skipped, 16 warnings in 693.35s".
summary=$(grep -E '[0-9]+ (passed|failed).* in [0-9.]+s' "$LOG" | tail -1)
passed=$(grep -oE '[0-9]+ passed' <<<"$summary" | grep -oE '[0-9]+' || echo 0)
failed=$(grep -oE '[0-9]+ failed' <<<"$summary" | grep -oE '[0-9]+' || echo 0)
skipped=$(grep -oE '[0-9]+ skipped' <<<"$summary" | grep -oE '[0-9]+' || echo 0)
if [ -z "$summary" ]; then
    # With -q added (-qq) pytest prints no summary line: count its progress characters.
    progress=$(grep -E '^[.FEsxX]+ +\[ *[0-9]+%\]$' "$LOG" | sed -E 's/ +\[.*//' | tr -d '\n')
    passed=$(tr -cd '.' <<<"$progress" | wc -c)
    failed=$(tr -cd 'FE' <<<"$progress" | wc -c)
    skipped=$(tr -cd 's' <<<"$progress" | wc -c)
fi
echo "[softcl] pyopencl $VER on $DEVICE: passed=${passed:-0} failed=${failed:-0} skipped=${skipped:-0} (log: $LOG)"
exit "$status"
