#!/usr/bin/env bash
# Benchmarks SoftCL's CPU device against PoCL and Intel's CPU runtime, all in one process
# through the system ICD loader (docs/PERFORMANCE.md):
#
#   scripts/bench.sh [softcl-bench options]
#
# e.g. `scripts/bench.sh --size small`, `scripts/bench.sh --kernels vecadd,nbody --reps 10`,
# `scripts/bench.sh --json bench.json`; `scripts/bench.sh --help` lists the options.
#
# Installs SoftCL's prerequisites and pocl-opencl-icd (apt-get, as scripts/install-deps.sh
# does), and in a venv of the build directory OpenCV and Intel's CPU runtime from PyPI
# (opencv-python-headless; intel-opencl-rt with intel-cmplr-lib-rt, its math libraries);
# builds the release driver and the harness, points OCL_ICD_VENDORS at a directory holding
# SoftCL's .icd, PoCL's (/etc/OpenCL/vendors/pocl.icd) and Intel's, and runs two parts:
# 1. the kernel table (softcl-bench, with the options given);
# 2. OpenCV's T-API operations on each implementation's CPU device (bench/opencv_ops.py),
#    checked against OpenCV's host path; SOFTCL_BENCH_OPENCV=0 leaves this part out.
# An implementation that cannot be installed (no package, no network) is left out with a
# warning. The exit status is non-zero when a kernel or an operation failed or gave a
# wrong result on SoftCL.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/install-deps.sh
source scripts/install-deps.sh
# shellcheck source=scripts/common.sh
source scripts/common.sh

softcl_step "prerequisites"
softcl_install_deps || exit 1
if ! dpkg-query -W -f='${Status}\n' pocl-opencl-icd 2>/dev/null | grep -q '^install ok installed$'; then
    softcl_log "installing pocl-opencl-icd (PoCL, the CPU implementation SoftCL is measured against)"
    export DEBIAN_FRONTEND=noninteractive
    if ! { softcl_as_root apt-get update -q && softcl_as_root apt-get install -y -q pocl-opencl-icd; }; then
        softcl_log "warning: pocl-opencl-icd could not be installed: SoftCL runs alone"
    fi
fi

# OpenCV and Intel's CPU runtime from PyPI, in a venv of the build directory.
VENV="$SOFTCL_TARGET_DIR/bench-venv"
softcl_step "OpenCV and Intel's CPU runtime (PyPI) in $VENV"
if [ ! -x "$VENV/bin/python" ] && ! python3 -m venv "$VENV" 2>/dev/null; then
    softcl_log "installing python3-venv"
    export DEBIAN_FRONTEND=noninteractive
    softcl_as_root apt-get install -y -q python3-venv python3-pip >/dev/null || true
    rm -rf "$VENV"
    python3 -m venv "$VENV" || softcl_log "warning: no Python venv: OpenCV and Intel's runtime left out"
fi
if [ -x "$VENV/bin/python" ]; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check numpy opencv-python-headless intel-opencl-rt intel-cmplr-lib-rt ||
        softcl_log "warning: pip could not install every package (OpenCV, Intel's runtime)"
fi
INTEL_LIB="$VENV/lib/libintelocl.so"

softcl_step "build: cargo build --release -p softcl-icd -p softcl-bench"
cargo build --release -p softcl-icd -p softcl-bench || exit 1
softcl_write_icd || exit 1

VENDORS="$SOFTCL_TARGET_DIR/bench-vendors"
rm -rf "$VENDORS"
mkdir -p "$VENDORS"
cp "$SOFTCL_ICD_FILE" "$VENDORS/softcl.icd"
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
    cp /etc/OpenCL/vendors/pocl.icd "$VENDORS/pocl.icd"
else
    softcl_log "warning: /etc/OpenCL/vendors/pocl.icd not found: PoCL left out"
fi
if [ -f "$INTEL_LIB" ]; then
    echo "$INTEL_LIB" >"$VENDORS/intel.icd"
else
    softcl_log "warning: $INTEL_LIB not found: Intel's CPU runtime left out"
fi
export OCL_ICD_VENDORS="$VENDORS"
softcl_log "OCL_ICD_VENDORS=$VENDORS:$(for f in "$VENDORS"/*.icd; do printf ' %s' "$(cat "$f")"; done)"

softcl_step "softcl-bench $*"
"$SOFTCL_TARGET_DIR/release/softcl-bench" "$@"
status=$?

if [ "${SOFTCL_BENCH_OPENCV:-1}" != 0 ]; then
    softcl_step "OpenCV's T-API: bench/opencv_ops.py"
    if "$VENV/bin/python" -c "import cv2" 2>/dev/null; then
        impls=("SoftCL=SoftCL")
        [ -f "$VENDORS/pocl.icd" ] && impls+=("PoCL=Portable Computing Language")
        [ -f "$VENDORS/intel.icd" ] && impls+=("Intel=Intel(R) OpenCL")
        "$VENV/bin/python" bench/opencv_ops.py "${impls[@]}" || status=1
    else
        softcl_log "warning: OpenCV is not installed in $VENV: its part is left out"
    fi
fi
exit $status
