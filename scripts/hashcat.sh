#!/usr/bin/env bash
# Runs hashcat (Debian package) on one SoftCL device and prints PASS/FAIL per step:
#   1. hashcat -I lists the device;
#   2. the benchmark of each hash mode in HASHCAT_MODES (default "0 100 1400 1000": MD5,
#      SHA1, SHA2-256, NTLM; each runs hashcat's self-test first), with -O;
#   3. the crack of md5('hashcat') from a small word list, pure kernel (no -O);
#   4. the same crack with -O (optimised kernel).
# The self-test is never disabled. Every step runs with only SoftCL visible and fresh
# hashcat directories: hashcat finds its home through the passwd entry, not $HOME, so the
# step's XDG_CACHE_HOME (compiled kernels) and XDG_DATA_HOME (potfile, sessions) point
# into a new directory, and every step builds its kernels cold.
#
# usage: scripts/hashcat.sh [cpu|gpu] [timeout-seconds-per-step]
#   cpu = SoftCL's CPU device (hashcat device 1), gpu = the modelled Intel Gen GPU (device 2).
# Needs a release build (cargo build --release -p softcl-icd). Kernel builds are slow: on a
# loaded 2-core machine a step takes 2-5 minutes. Exit status: the number of failed steps.

set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kind=${1:-cpu}
step_timeout=${2:-1200}
case "$kind" in
    cpu) dev=1 ;;
    gpu) dev=2 ;;
    *)
        echo "usage: $0 [cpu|gpu] [timeout-seconds-per-step]" >&2
        exit 2
        ;;
esac

command -v hashcat >/dev/null || {
    echo "error: hashcat is not installed (apt-get install hashcat)" >&2
    exit 2
}
softcl_write_icd >/dev/null || exit 2
export OCL_ICD_VENDORS="$SOFTCL_ICD_FILE"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# md5('hashcat'); the word list holds it among others.
echo 8743b52063cd84097a65d1633f5c74f5 >"$work/hash.txt"
printf '%s\n' password 123456 letmein hashcat qwerty abc123 dragon >"$work/words.txt"

failed=0
# run <name> <log> <success-grep> <hashcat args...>
run() {
    local name=$1 log=$2 want=$3
    shift 3
    local home
    home=$(mktemp -d -p "$work")
    local start=$SECONDS
    (cd "$work" && HOME=$home XDG_CACHE_HOME=$home/.cache XDG_DATA_HOME=$home/.local/share \
        timeout "$step_timeout" hashcat "$@" </dev/null >"$log" 2>&1)
    local rc=$?
    local secs=$((SECONDS - start))
    if grep -q -- "$want" "$log" && ! grep -qE 'self-test failed|build failed|CL_[A-Z_]*(FAILURE|ERROR)|CL_INVALID' "$log"; then
        echo "PASS $name (${secs}s)"
    else
        echo "FAIL $name (exit $rc, ${secs}s); last lines of the log:"
        tail -n 15 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

# Its own session name: hashcat refuses to start while another instance of the same session
# runs, so the cpu and gpu runs could not overlap.
common=(--force -D 1,2 -d "$dev" --session "softcl-$kind-$$")
run "hashcat -I lists device $dev" "$work/info.log" "Backend Device ID #$dev" -I --session "softcl-$kind-$$"
for mode in ${HASHCAT_MODES:-0 100 1400 1000}; do
    run "benchmark -m $mode -O (self-test + speed) on device $dev" "$work/bench-$mode.log" "^Speed.#$dev" \
        -b -m "$mode" "${common[@]}"
    grep "^Speed.#$dev" "$work/bench-$mode.log" | sed 's/^/    /'
done
run "crack md5('hashcat'), pure kernel, on device $dev" "$work/crack.log" \
    "8743b52063cd84097a65d1633f5c74f5:hashcat" \
    -m 0 -a 0 --potfile-disable "${common[@]}" "$work/hash.txt" "$work/words.txt"
run "crack md5('hashcat'), -O, on device $dev" "$work/crack-O.log" \
    "8743b52063cd84097a65d1633f5c74f5:hashcat" \
    -m 0 -a 0 -O --potfile-disable "${common[@]}" "$work/hash.txt" "$work/words.txt"

echo "hashcat on SoftCL device $dev ($kind): $failed step(s) failed"
exit "$failed"
