#!/usr/bin/env bash
# SoftCL prerequisites for Debian 12 (bookworm): the Debian packages and a Rust toolchain.
#
# Sourced by scripts/setup.sh and scripts/test.sh, which call softcl_install_deps; it can
# also be run on its own:  bash scripts/install-deps.sh
#
# Idempotent: only packages that are not installed yet are installed (apt-get update runs
# only then). Runs apt-get as root, or through sudo when not root.

SOFTCL_DEB_PACKAGES=(
    clang-15           # OpenCL C -> LLVM IR (spir64)
    llvm-spirv-15      # LLVM IR -> SPIR-V
    llvm-22-dev        # native code generation (from bookworm-security)
    libpolly-22-dev    # LLVM 22 cmake/llvm-config expect Polly next to it
    ocl-icd-libopencl1 # the system OpenCL ICD loader (libOpenCL.so.1)
    ocl-icd-opencl-dev # libOpenCL.so for linking the conformance tests
    opencl-c-headers   # CL/cl.h (OpenCL 3.0), CL/cl_icd.h
    clinfo             # shows the registered platforms; used by a test
    libsleef3          # SLEEF vector math for math built-ins on vectors (compiler/src/back/vecmath.rs)
    libclang1-15       # libclang for bindgen
    spirv-tools        # spirv-link (clLinkProgram), spirv-val, spirv-as (tests)
    chromium           # headless: renders the Gen report page in a test (device-model/tests/gen_html.rs)
    pkg-config
    zlib1g-dev         # libraries LLVM 22 links against
    libzstd-dev
    libxml2-dev
    libffi-dev
    libedit-dev
)

# Oldest rustc that builds the workspace (the code uses APIs stabilised in 1.87).
SOFTCL_MIN_RUST_MINOR=87

softcl_log() { printf '[softcl] %s\n' "$*"; }

# Runs a command as root: directly when root, else through sudo.
softcl_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "error: root or sudo is needed to run: $*" >&2
        return 1
    fi
}

# Prints the packages of SOFTCL_DEB_PACKAGES that are not installed.
softcl_missing_packages() {
    local p
    for p in "${SOFTCL_DEB_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
            echo "$p"
        fi
    done
}

# True when APT knows an installable version of package $1.
softcl_has_candidate() {
    local c
    c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2; exit}')
    [ -n "$c" ] && [ "$c" != "(none)" ]
}

# llvm-22-dev comes from Debian 12's security suite (bookworm-security), which a standard
# Debian 12 installation lists in its APT sources. When this machine's sources lack it, add
# it next to the Debian mirror already configured (<mirror>/debian -> <mirror>/debian-security).
softcl_enable_security_suite() {
    if grep -rqsE '(^|[[:space:]])bookworm-security([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        return 0
    fi
    local mirror=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        mirror=$(awk '/^[[:space:]]*URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
        mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list)
    fi
    if [ -z "$mirror" ]; then
        echo "error: cannot find the Debian mirror in the APT sources to add bookworm-security" >&2
        return 1
    fi
    local security="${mirror%/}-security"
    softcl_log "adding the bookworm-security suite ($security) for llvm-22-dev"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$security" | softcl_as_root tee /etc/apt/sources.list.d/softcl-bookworm-security.sources >/dev/null
}

# Checks that cargo (with rustfmt and clippy) is available and recent enough.
softcl_check_rust() {
    if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1 || ! command -v rustc >/dev/null 2>&1; then
        cat >&2 <<MSG
error: Rust (cargo and rustc) was not found.
  SoftCL needs Rust 1.${SOFTCL_MIN_RUST_MINOR} or newer. Debian 12's 'cargo' and 'rustc' packages
  (1.63) are too old: install a current stable toolchain with rustup, with the rustfmt
  and clippy components, make sure cargo is on PATH, and run this script again.
MSG
        return 1
    fi
    local version minor
    version=$(rustc --version | awk '{print $2}')
    minor=$(echo "$version" | cut -d. -f2)
    if [ "$(echo "$version" | cut -d. -f1)" = "1" ] && [ "${minor:-0}" -lt "$SOFTCL_MIN_RUST_MINOR" ]; then
        echo "error: rustc $version is too old: SoftCL needs 1.${SOFTCL_MIN_RUST_MINOR} or newer (rustup update stable)" >&2
        return 1
    fi
    softcl_log "rust: $(cargo --version)"
}

# Installs what is missing. Returns non-zero on failure.
softcl_install_deps() {
    local missing=() p
    mapfile -t missing < <(softcl_missing_packages)
    if [ "${#missing[@]}" -eq 0 ]; then
        softcl_log "all ${#SOFTCL_DEB_PACKAGES[@]} Debian packages are installed"
    else
        softcl_log "installing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        softcl_as_root apt-get update -q || return 1
        if ! softcl_has_candidate llvm-22-dev && printf '%s\n' "${missing[@]}" | grep -qx llvm-22-dev; then
            softcl_enable_security_suite || return 1
            softcl_as_root apt-get update -q || return 1
        fi
        local unavailable=()
        for p in "${missing[@]}"; do
            softcl_has_candidate "$p" || unavailable+=("$p")
        done
        if [ "${#unavailable[@]}" -gt 0 ]; then
            echo "error: APT has no installable version of: ${unavailable[*]} (is this Debian 12 bookworm?)" >&2
            return 1
        fi
        softcl_as_root apt-get install -y -q --no-install-recommends "${missing[@]}" || return 1
    fi
    softcl_check_rust
}

# Run directly: install and report.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    softcl_install_deps
fi
