#!/usr/bin/env bash
# First command on a fresh Debian 12 machine:
#   installs the prerequisites, builds SoftCL (release), registers the driver with the
#   system ICD loader (/etc/OpenCL/vendors/softcl.icd, and target/release/softcl.icd for
#   OCL_ICD_VENDORS), shows it with clinfo and runs the demo on both devices.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/install-deps.sh
source scripts/install-deps.sh
# shellcheck source=scripts/common.sh
source scripts/common.sh

softcl_step "prerequisites"
softcl_install_deps

softcl_step "cargo build --release"
cargo build --release

softcl_step "registering the driver"
softcl_write_icd
if printf '%s\n' "$SOFTCL_LIB" | softcl_as_root tee /etc/OpenCL/vendors/softcl.icd >/dev/null 2>&1 \
    || { softcl_as_root mkdir -p /etc/OpenCL/vendors \
        && printf '%s\n' "$SOFTCL_LIB" | softcl_as_root tee /etc/OpenCL/vendors/softcl.icd >/dev/null; }; then
    echo "[softcl] wrote /etc/OpenCL/vendors/softcl.icd: every OpenCL program now sees SoftCL"
else
    echo "[softcl] note: could not write /etc/OpenCL/vendors/softcl.icd (no root?);" \
        "use OCL_ICD_VENDORS=$SOFTCL_ICD_FILE"
fi

softcl_step "clinfo (OCL_ICD_VENDORS=$SOFTCL_ICD_FILE: SoftCL only)"
OCL_ICD_VENDORS="$SOFTCL_ICD_FILE" clinfo -l
OCL_ICD_VENDORS="$SOFTCL_ICD_FILE" clinfo

softcl_step "demo: cargo run --release -p softcl-conformance --bin softcl-demo"
OCL_ICD_VENDORS="$SOFTCL_ICD_FILE" cargo run --release -p softcl-conformance --bin softcl-demo

echo
echo "SoftCL is built and registered. Use it from any OpenCL program with"
echo "  OCL_ICD_VENDORS=$SOFTCL_ICD_FILE <program>"
echo "(or without the variable, through /etc/OpenCL/vendors/softcl.icd when it was written)."
echo "Run the tests with: bash scripts/test.sh"
