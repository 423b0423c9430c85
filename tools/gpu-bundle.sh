#!/usr/bin/env bash
# Packs a build for a GPU machine that has no package registry: the
# fleetbench binaries (the client and fleetbenchd, which it execs for
# probe/agent/controller), the GPU module and every shared library they need that
# is not part of the base system (per ldd), plus tools/gpu-selfcheck.sh.
#   tools/gpu-bundle.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, out/gpu-bundle)
# On the GPU machine: OUT_DIR/gpu-selfcheck.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-out/gpu-bundle}
for b in fleetbench fleetbenchd; do
  [ -x "$BUILD/cli/$b" ] || { echo "gpu-bundle: no $BUILD/cli/$b; build first" >&2; exit 1; }
done
[ -f "$BUILD/cli/libfleetbench_gpu.so" ] || { echo "gpu-bundle: no GPU module in $BUILD/cli (configure with FLEETBENCH_WITH_CUDA=ON)" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/lib"
cp "$BUILD/cli/fleetbench" "$BUILD/cli/fleetbenchd" "$BUILD/cli/libfleetbench_gpu.so" "$OUT/"
cp tools/gpu-selfcheck.sh tools/gpu-env.sh bench/nccl_gpu_check.sh "$OUT/"
# Libraries every Linux has (glibc, the loader) stay behind; the driver's
# libcuda/libnvidia-ml must come from the GPU machine itself. cuBLAS(Lt) and
# NCCL (750 MB together) are found there too (the CUDA toolkit, or the
# nvidia-* Python wheels next to PyTorch: gpu-selfcheck.sh looks in both);
# BUNDLE_CUDA_LIBS=1 carries them anyway.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libgcc_s|libstdc\+\+|libcuda\.so|libnvidia-ml)'
[ "${BUNDLE_CUDA_LIBS:-0}" = 1 ] || skip="${skip%)}|libcublas|libnccl|libcudart)"
# OpenBLAS is dlopen'ed by the CPU gemm plugin, so ldd does not list it:
# carry it by name, and what it needs (libgfortran, ...) through the loop.
blas=$(ldconfig -p | awk '/libopenblas\.so\.0 .*x86-64/ {print $NF; exit}')
[ -n "$blas" ] && cp -L "$blas" "$OUT/lib/libopenblas.so.0"
for f in "$OUT/fleetbench" "$OUT/fleetbenchd" "$OUT/libfleetbench_gpu.so" ${blas:+"$OUT/lib/libopenblas.so.0"}; do
  LD_LIBRARY_PATH=/usr/local/cuda/lib64 ldd "$f" | awk '/=> \//{print $1, $3}' | while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    [ -e "$OUT/lib/$name" ] || cp -L "$path" "$OUT/lib/$name"
  done
done
# Debug info is for here; the bundle has to fit a 64 MiB carry.
strip --strip-debug "$OUT/fleetbench" "$OUT/fleetbenchd" "$OUT/libfleetbench_gpu.so" "$OUT"/lib/*.so* 2>/dev/null || true
# OpenBLAS is 36 MB of it and 4 MB in xz: the scripts that run there unpack
# it on first use (xz, or Python's lzma where xz is missing).
[ -f "$OUT/lib/libopenblas.so.0" ] && xz -6 "$OUT/lib/libopenblas.so.0"
echo "gpu-bundle: $OUT"
du -sh "$OUT" "$OUT/lib"
size=$(du -sb "$OUT" | awk '{print $1}')
[ "$size" -le $((64 << 20)) ] || echo "gpu-bundle: WARNING: $size bytes, over the 64 MiB a device call carries" >&2
ls -la "$OUT/lib" | awk 'NR>1{printf "  %10d  %s\n", $5, $9}'
