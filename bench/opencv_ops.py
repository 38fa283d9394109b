#!/usr/bin/env python3
"""OpenCV's T-API operations timed on several OpenCL CPU implementations (docs/PERFORMANCE.md).

    opencv_ops.py [--reps N] [--json FILE] NAME=PLATFORM [NAME=PLATFORM ...]

Each NAME=PLATFORM runs in a process of its own with OPENCV_OPENCL_DEVICE=PLATFORM:CPU:
(PLATFORM: the OpenCL platform's name, e.g. `SoftCL`, `Portable Computing Language`,
`Intel(R) OpenCL`), so OpenCV picks that implementation's CPU device, and with OpenCV's
cache of program binaries off. Every operation runs
on cv2.UMat images of 1920x1080 (8-bit gray, 8-bit BGR, 32-bit float): one warm-up call,
then the best of N calls (default 10) each ending in cv2.ocl.finish(). Its result is
compared with OpenCV's host path (the same call on numpy arrays): within 1 (8-bit), or
within 1e-4 of the largest magnitude (floats). The first implementation is the one measured
(SoftCL); the table gives its time against each other's and geometric means. The exit status
is non-zero when the first implementation failed an operation or differed from the host.
"""
import json
import math
import os
import subprocess
import sys
import time


def operations(cv2, np):
    """(name, function of (gray, gray2, bgr, float) -> result, whether the result is float)."""
    k3 = np.ones((3, 3), np.uint8)
    return [
        ("threshold", lambda u, v, c, f: cv2.threshold(u, 127, 255, cv2.THRESH_BINARY)[1], False),
        ("absdiff", lambda u, v, c, f: cv2.absdiff(u, v), False),
        ("addWeighted", lambda u, v, c, f: cv2.addWeighted(u, 0.3, v, 0.7, 2), False),
        ("countNonZero", lambda u, v, c, f: cv2.countNonZero(u), False),
        ("minMaxLoc", lambda u, v, c, f: cv2.minMaxLoc(u)[:2], False),
        ("norm", lambda u, v, c, f: cv2.norm(u, v), True),
        ("erode", lambda u, v, c, f: cv2.erode(u, k3), False),
        ("dilate", lambda u, v, c, f: cv2.dilate(u, k3), False),
        ("pyrDown", lambda u, v, c, f: cv2.pyrDown(u), False),
        ("resize", lambda u, v, c, f: cv2.resize(u, (960, 540), interpolation=cv2.INTER_LINEAR), False),
        ("GaussianBlur", lambda u, v, c, f: cv2.GaussianBlur(u, (5, 5), 1.5), False),
        ("medianBlur", lambda u, v, c, f: cv2.medianBlur(u, 5), False),
        ("cvtColor", lambda u, v, c, f: cv2.cvtColor(c, cv2.COLOR_BGR2GRAY), False),
        ("Sobel", lambda u, v, c, f: cv2.Sobel(f, cv2.CV_32F, 1, 0), True),
        ("equalizeHist", lambda u, v, c, f: cv2.equalizeHist(u), False),
        ("cornerHarris", lambda u, v, c, f: cv2.cornerHarris(f, 2, 3, 0.04), True),
        ("multiply", lambda u, v, c, f: cv2.multiply(f, f), True),
    ]


def child(reps):
    """Times every operation on the device OPENCV_OPENCL_DEVICE selects; prints JSON."""
    import cv2
    import numpy as np

    cv2.ocl.setUseOpenCL(True)
    out = {"device": None, "ops": {}}
    if not cv2.ocl.haveOpenCL():
        print(json.dumps(out))
        return
    out["device"] = cv2.ocl.Device.getDefault().name()
    rng = np.random.default_rng(1)
    gray = rng.integers(0, 255, (1080, 1920), dtype=np.uint8)
    gray2 = rng.integers(0, 255, (1080, 1920), dtype=np.uint8)
    bgr = rng.integers(0, 255, (1080, 1920, 3), dtype=np.uint8)
    flt = gray.astype(np.float32)
    host = (gray, gray2, bgr, flt)
    dev = tuple(cv2.UMat(x) for x in host)
    for name, fn, is_float in operations(cv2, np):
        try:
            r = fn(*dev)
            cv2.ocl.finish()
            best = math.inf
            for _ in range(reps):
                t = time.perf_counter()
                r = fn(*dev)
                cv2.ocl.finish()
                best = min(best, time.perf_counter() - t)
            got = np.asarray(r.get() if isinstance(r, cv2.UMat) else r, np.float64)
            ref = np.asarray(fn(*host), np.float64)
            err = float(np.abs(got - ref).max()) if got.size else 0.0
            tol = 1e-4 * float(np.abs(ref).max()) if is_float else 1.0
            out["ops"][name] = {"ms": best * 1e3, "err": err, "ok": bool(err <= max(tol, 1e-6))}
        except Exception as e:  # an implementation that fails one operation still reports the rest
            out["ops"][name] = {"error": str(e).strip().splitlines()[-1][:200]}
    print(json.dumps(out))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    reps, json_file, impls = 10, None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--child":
            child(int(argv[i + 1]))
            return 0
        if a == "--reps":
            reps, i = int(argv[i + 1]), i + 1
        elif a == "--json":
            json_file, i = argv[i + 1], i + 1
        elif "=" in a:
            impls.append(tuple(a.split("=", 1)))
        else:
            print(__doc__, file=sys.stderr)
            return 2
        i += 1
    if not impls:
        print(__doc__, file=sys.stderr)
        return 2
    results = {}
    for name, platform in impls:
        # OpenCV keeps program binaries per device and driver version; a driver rebuilt
        # under the same version would run binaries an older build made. Every
        # implementation compiles from source in its warm-up call instead.
        env = dict(os.environ, OPENCV_OPENCL_DEVICE=f"{platform}:CPU:", OPENCV_OPENCL_CACHE_ENABLE="0")
        p = subprocess.run(
            [sys.executable, __file__, "--child", str(reps)], env=env, capture_output=True, text=True
        )
        line = next((l for l in reversed(p.stdout.splitlines()) if l.startswith("{")), None)
        results[name] = json.loads(line) if line else {"device": None, "ops": {}}
        dev = results[name]["device"]
        print(f"[opencv] {name}: {dev or 'no OpenCL CPU device (' + platform + ')'}", file=sys.stderr)
    names = [n for n, _ in impls if results[n]["device"]]
    first = impls[0][0]
    if first not in names:
        print(f"[opencv] {first} has no OpenCL CPU device", file=sys.stderr)
        return 1
    others = [n for n in names if n != first]
    header = ["operation"] + [f"{n} ms" for n in names] + [f"{first} / {n}" for n in others]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    failed, ratios = [], {n: [] for n in others}
    for op in results[first]["ops"]:
        cells = [op]
        for n in names:
            r = results[n]["ops"].get(op, {})
            if "ms" not in r:
                cells.append("error: " + r.get("error", "missing"))
            elif r["ok"]:
                cells.append(f"{r['ms']:.3f}")
            else:
                cells.append(f"{r['ms']:.3f} (differs by {r['err']:.3g})")
        mine = results[first]["ops"][op]
        if "ms" not in mine or not mine["ok"]:
            failed.append(op)
        for n in others:
            r = results[n]["ops"].get(op, {})
            if "ms" in mine and "ms" in r:
                ratios[n].append(mine["ms"] / r["ms"])
                cells.append(f"{mine['ms'] / r['ms']:.2f}x")
            else:
                cells.append("-")
        print("| " + " | ".join(cells) + " |")
    print()
    for n in others:
        print(f"- {first} time / {n} time, geometric mean: {geomean(ratios[n]):.2f}x (below 1: {first} faster)")
    if failed:
        print(f"- {first} failed or differed from the host: {', '.join(failed)}")
    if json_file:
        with open(json_file, "w") as f:
            json.dump({"reps": reps, "results": results}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
