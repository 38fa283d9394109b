#!/usr/bin/env bash
# Helpers shared by scripts/setup.sh and scripts/test.sh (sourced, not run).

# The repository root and cargo's target directory (CARGO_TARGET_DIR is respected).
SOFTCL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SOFTCL_TARGET_DIR=${CARGO_TARGET_DIR:-$SOFTCL_ROOT/target}
case "$SOFTCL_TARGET_DIR" in
    /*) ;;
    *) SOFTCL_TARGET_DIR="$SOFTCL_ROOT/$SOFTCL_TARGET_DIR" ;;
esac
SOFTCL_LIB="$SOFTCL_TARGET_DIR/release/libsoftcl.so"
SOFTCL_ICD_FILE="$SOFTCL_TARGET_DIR/release/softcl.icd"

# Prints a banner for a step.
softcl_step() { printf '\n==== %s\n' "$*"; }

# Writes target/release/softcl.icd: one line, the absolute path of libsoftcl.so. Point
# OCL_ICD_VENDORS at it to use this build without root (the loader then sees only SoftCL).
softcl_write_icd() {
    if [ ! -f "$SOFTCL_LIB" ]; then
        echo "error: $SOFTCL_LIB was not built" >&2
        return 1
    fi
    printf '%s\n' "$SOFTCL_LIB" >"$SOFTCL_ICD_FILE"
    echo "[softcl] wrote $SOFTCL_ICD_FILE -> $SOFTCL_LIB"
}
