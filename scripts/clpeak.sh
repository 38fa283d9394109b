#!/usr/bin/env bash
# Runs clinfo and clpeak (Debian packages clinfo and clpeak 1.1.2) on one SoftCL device
# through the system ICD loader, with only SoftCL visible, and checks what they print.
# Prints PASS or FAIL per step:
#
#   clinfo   exits with 0, lists the device, and no query answered with an error
#            (clinfo prints "<error: ...>" or "<invalid ...>" where a clGet*Info call fails);
#   clpeak   exits with 0 and its XML dump (--enable-xml-dump) holds every section it ran
#            (global memory bandwidth, single- and double-precision compute, integer and
#            24-bit integer compute, transfer bandwidth, kernel launch latency; double only
#            when the device lists cl_khr_fp64), each value a number above zero (clpeak
#            prints "inf" for a map or unmap that took no measurable time: SoftCL's maps
#            copy nothing). Half precision is skipped by clpeak itself: no cl_khr_fp16.
#
# usage: scripts/clpeak.sh [cpu|gpu] [clpeak options]
#   cpu = SoftCL's CPU device (clpeak -d 0), gpu = the modelled Intel Gen GPU (-d 1).
#   clpeak options (e.g. --compute-sp, --use-event-timer) replace the default, all tests.
# Installs clinfo and clpeak with apt-get when they are missing. Needs a release build
# (cargo build --release -p softcl-icd). Exit status: the number of steps that failed.
# The numbers are clpeak's own; on the Gen device they are the model's times (profiling
# events) or the host's wall clock, as clpeak asks (docs/PERFORMANCE.md).

set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=scripts/install-deps.sh
. "$(dirname "${BASH_SOURCE[0]}")/install-deps.sh"

kind=${1:-cpu}
case "$kind" in
    cpu) dev=0 ;;
    gpu) dev=1 ;;
    *)
        echo "usage: $0 [cpu|gpu] [clpeak options]" >&2
        exit 2
        ;;
esac
shift || true

SOFTCL_DEB_PACKAGES=(clinfo clpeak)
softcl_install_deps >/dev/null || {
    echo "error: could not install clinfo and clpeak" >&2
    exit 2
}
softcl_write_icd >/dev/null || exit 2
export OCL_ICD_VENDORS="$SOFTCL_ICD_FILE"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
verdict() { # step, 0 = pass, reason
    if [ "$2" -eq 0 ]; then
        echo "PASS $1"
    else
        echo "FAIL $1: $3"
        failed=$((failed + 1))
    fi
}

# clinfo: the whole report, then the one device's part of it.
softcl_step "clinfo (OCL_ICD_VENDORS=$SOFTCL_ICD_FILE)"
clinfo >"$work/clinfo.txt" 2>&1
rc=$?
name=$(clinfo -l 2>/dev/null | sed -n "s/.*Device #$dev: //p")
errors=$(grep -n -i -E '<error|<invalid|CL_INVALID|CL_OUT_OF' "$work/clinfo.txt")
if [ $rc -ne 0 ]; then
    verdict clinfo 1 "exit status $rc"
elif [ -z "$name" ]; then
    verdict clinfo 1 "no device #$dev in clinfo -l"
elif [ -n "$errors" ]; then
    verdict clinfo 1 "queries that failed:"$'\n'"$errors"
else
    verdict clinfo 0
    echo "  device #$dev: $name ($(wc -l <"$work/clinfo.txt") lines of clinfo, no query failed)"
fi

fp64=0
if clinfo --raw 2>/dev/null | grep -E "^\[[^]]*/$dev\] +CL_DEVICE_EXTENSIONS " | grep -qw cl_khr_fp64; then
    fp64=1
fi

softcl_step "clpeak -p 0 -d $dev ${*:---all-tests}"
start=$(date +%s)
clpeak -p 0 -d "$dev" "$@" --enable-xml-dump -f "$work/clpeak.xml" 2>&1 | tee "$work/clpeak.txt"
rc=${PIPESTATUS[0]}
echo "  ($(($(date +%s) - start)) s)"
if [ $rc -ne 0 ]; then
    verdict clpeak 1 "exit status $rc"
elif [ ! -s "$work/clpeak.xml" ]; then
    verdict clpeak 1 "no XML dump"
else
    # The sections the run was asked for: all of them, or the ones named by options.
    want=""
    if [ $# -eq 0 ] || printf '%s\n' "$@" | grep -q -- --all-tests; then
        want="global_memory_bandwidth single_precision_compute integer_compute integer_compute_fast transfer_bandwidth kernel_launch_latency"
        [ $fp64 -eq 1 ] && want="$want double_precision_compute"
    else
        for o in "$@"; do
            case "$o" in
                --global-bandwidth) want="$want global_memory_bandwidth" ;;
                --compute-sp) want="$want single_precision_compute" ;;
                --compute-dp) [ $fp64 -eq 1 ] && want="$want double_precision_compute" ;;
                --compute-integer) want="$want integer_compute" ;;
                --compute-intfast) want="$want integer_compute_fast" ;;
                --transfer-bandwidth) want="$want transfer_bandwidth" ;;
                --kernel-latency) want="$want kernel_launch_latency" ;;
            esac
        done
    fi
    problems=$(python3 - "$work/clpeak.xml" $want <<'EOF'
import math, sys
import xml.etree.ElementTree as ET

device = ET.parse(sys.argv[1]).getroot().find("platform/device")
if device is None:
    print("no device in the XML dump")
    sys.exit()
for section in sys.argv[2:]:
    node = device.find(section)
    if node is None:
        print(f"{section}: missing")
        continue
    leaves = [node] if len(node) == 0 else list(node)
    for leaf in leaves:
        try:
            value = float(leaf.text)
        except (TypeError, ValueError):
            value = float("nan")
        if not (value > 0 or math.isinf(value)):
            print(f"{section}/{leaf.tag}: {leaf.text!r}")
EOF
    )
    if [ -n "$problems" ]; then
        verdict clpeak 1 "results that are missing or not positive:"$'\n'"$problems"
    else
        verdict clpeak 0
        echo "  sections: $want"
    fi
fi

exit $failed
