#!/usr/bin/env bash
# Runs ffmpeg's OpenCL filters (Debian package ffmpeg 5.1) on one SoftCL device and on PoCL,
# and compares the frames byte for byte. Each filter chain uploads frames to OpenCL images
# (hwupload), runs one or two *_opencl filters there and downloads them (hwdownload); the
# output is raw video, so any difference in a kernel's arithmetic or in image conversion
# shows. Prints PASS (identical), DIFF (how many bytes differ, and the largest difference)
# or FAIL (the run failed) per filter.
#
# usage: scripts/ffmpeg.sh [cpu|gpu]
#   cpu = SoftCL's CPU device (ffmpeg's opencl=ocl:0.0), gpu = the modelled Intel Gen GPU
#   (ocl:0.1). PoCL is the reference (its ICD file /etc/OpenCL/vendors/pocl.icd).
# Installs ffmpeg and pocl-opencl-icd with apt-get when they are missing. Needs a release
# build (cargo build --release -p softcl-icd). Exit status: the number of filters that did
# not give PoCL's output.

set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=scripts/install-deps.sh
. "$(dirname "${BASH_SOURCE[0]}")/install-deps.sh"

kind=${1:-cpu}
case "$kind" in
    cpu) dev=0.0 ;;
    gpu) dev=0.1 ;;
    *)
        echo "usage: $0 [cpu|gpu]" >&2
        exit 2
        ;;
esac

SOFTCL_DEB_PACKAGES=(ffmpeg pocl-opencl-icd)
softcl_install_deps >/dev/null || {
    echo "error: could not install ffmpeg and pocl-opencl-icd" >&2
    exit 2
}
pocl_icd=/etc/OpenCL/vendors/pocl.icd
[ -f "$pocl_icd" ] || {
    echo "error: $pocl_icd is missing (pocl-opencl-icd)" >&2
    exit 2
}
softcl_write_icd >/dev/null || exit 2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ff() { ffmpeg -nostdin -hide_banner -loglevel error "$@"; }
# Two inputs of three 320x240 frames: a test pattern with gradients and text, and a
# Mandelbrot set (for the two-input filters).
ff -f lavfi -i testsrc2=size=320x240:rate=1 -frames:v 3 -pix_fmt yuv420p -y "$work/a.y4m" || exit 2
ff -f lavfi -i mandelbrot=size=320x240:rate=1 -frames:v 3 -pix_fmt yuv420p -y "$work/b.y4m" || exit 2

up="format=yuv420p,hwupload"
down="hwdownload,format=yuv420p"
filters=(
    "[0:v]$up,avgblur_opencl=sizeX=3,$down"
    "[0:v]$up,boxblur_opencl,$down"
    "[0:v]$up,unsharp_opencl,$down"
    "[0:v]$up,convolution_opencl=0 1 0 1 -4 1 0 1 0:0 1 0 1 -4 1 0 1 0:0 1 0 1 -4 1 0 1 0:0 1 0 1 -4 1 0 1 0,$down"
    "[0:v]$up,sobel_opencl,$down"
    "[0:v]$up,prewitt_opencl,$down"
    "[0:v]$up,roberts_opencl,$down"
    "[0:v]$up,dilation_opencl,$down"
    "[0:v]$up,erosion_opencl,$down"
    "[0:v]$up,nlmeans_opencl,$down"
    "[0:v]$up,transpose_opencl=dir=1,$down"
    "[0:v]$up,pad_opencl=w=400:h=300:x=10:y=20,$down"
    "[0:v]$up,deshake_opencl,$down"
    "[0:v]$up[a];[1:v]format=yuv420p,scale=160:120,hwupload[b];[a][b]overlay_opencl=x=20:y=30,$down"
    "[0:v]$up[a];[1:v]$up[b];[a][b]xfade_opencl=duration=1:offset=0,$down"
    "[0:v]format=rgba,hwupload,colorkey_opencl=color=red,hwdownload,format=rgba"
)

# run <vendors> <device> <graph> <out> <log>
run() {
    OCL_ICD_VENDORS=$1 ff -init_hw_device "opencl=ocl:$2" -filter_hw_device ocl \
        -i "$work/a.y4m" -i "$work/b.y4m" -filter_complex "$3" -f rawvideo -y "$4" 2>"$5"
}

failed=0
for graph in "${filters[@]}"; do
    name=$(grep -oE '[a-z]+_opencl(=[^,]*)?' <<<"$graph" | head -1 | cut -c1-40)
    start=$SECONDS
    if ! run "$pocl_icd" 0.0 "$graph" "$work/pocl.raw" "$work/pocl.log"; then
        echo "FAIL $name: PoCL could not run it: $(tail -n 1 "$work/pocl.log")"
        failed=$((failed + 1))
        continue
    fi
    if ! run "$SOFTCL_ICD_FILE" "$dev" "$graph" "$work/softcl.raw" "$work/softcl.log"; then
        echo "FAIL $name: $(tail -n 3 "$work/softcl.log" | tr '\n' ' ')"
        failed=$((failed + 1))
        continue
    fi
    if cmp -s "$work/pocl.raw" "$work/softcl.raw"; then
        echo "PASS $name ($(stat -c %s "$work/softcl.raw") bytes identical to PoCL's, $((SECONDS - start)) s)"
    else
        # cmp -l prints "offset a b" (octal bytes) per differing byte.
        read -r n maxd < <(cmp -l "$work/pocl.raw" "$work/softcl.raw" 2>/dev/null | awk '
            function oct(s,  v, i) { v = 0; for (i = 1; i <= length(s); i++) v = v * 8 + substr(s, i, 1); return v }
            { a = oct($2); b = oct($3); d = a > b ? a - b : b - a; if (d > m) m = d; n++ }
            END { print n + 0, m + 0 }')
        echo "DIFF $name: $n bytes differ from PoCL's (largest difference $maxd; sizes $(stat -c %s "$work/pocl.raw") / $(stat -c %s "$work/softcl.raw"))"
        failed=$((failed + 1))
    fi
done
echo "ffmpeg OpenCL filters on SoftCL $kind (ocl:$dev): $((${#filters[@]} - failed)) of ${#filters[@]} identical to PoCL"
exit "$failed"
