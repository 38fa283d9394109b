#!/usr/bin/env bash
# Benchmarks SoftCL's CPU device against PoCL, both in one process through the system ICD
# loader (docs/PERFORMANCE.md):
#
#   scripts/bench.sh [softcl-bench options]
#
# e.g. `scripts/bench.sh --size small`, `scripts/bench.sh --kernels vecadd,nbody --reps 10`,
# `scripts/bench.sh --json bench.json`; `scripts/bench.sh --help` lists the options.
#
# Installs SoftCL's prerequisites and pocl-opencl-icd (apt-get, as scripts/install-deps.sh
# does), builds the release driver and the harness, points OCL_ICD_VENDORS at a directory
# holding SoftCL's .icd and PoCL's (/etc/OpenCL/vendors/pocl.icd), and runs the harness.
# Without PoCL (no package available) the table has SoftCL's column only. The exit status
# is the harness's: non-zero when any kernel failed or gave a wrong result.
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
    softcl_log "warning: /etc/OpenCL/vendors/pocl.icd not found: SoftCL runs alone"
fi
export OCL_ICD_VENDORS="$VENDORS"
softcl_log "OCL_ICD_VENDORS=$VENDORS:$(for f in "$VENDORS"/*.icd; do printf ' %s' "$(cat "$f")"; done)"

softcl_step "softcl-bench $*"
"$SOFTCL_TARGET_DIR/release/softcl-bench" "$@"
