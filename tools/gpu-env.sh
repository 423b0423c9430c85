# tools/gpu-env.sh — sourced by gpu-selfcheck.sh and nccl_gpu_check.sh with
# HERE set to their folder (a bundle from tools/gpu-bundle.sh, or tools/ or
# bench/ of a source tree): finds the fleetbench binary (FB), unpacks the
# bundle's OpenBLAS, and exports the library path and the GPU module for it.
FB="$HERE/fleetbench"
[ -x "$FB" ] || FB="$HERE/../build/cli/fleetbench"   # from a source tree
# cuBLAS(Lt) and NCCL from the machine: the toolkit, or PyTorch's wheels.
cuda_libs=$(python3 - 2>/dev/null <<'PY'
import importlib, os
dirs = []
for mod in ("nvidia.cublas", "nvidia.nccl", "nvidia.cuda_runtime"):
    try:
        for p in importlib.import_module(mod).__path__:
            if os.path.isdir(os.path.join(p, "lib")):
                dirs.append(os.path.join(p, "lib"))
    except Exception:
        pass
print(":".join(dirs))
PY
)
# A bundle carries OpenBLAS xz-compressed (tools/gpu-bundle.sh): unpack it
# once, with xz or, where xz is missing, Python's lzma.
if [ -f "$HERE/lib/libopenblas.so.0.xz" ] && [ ! -f "$HERE/lib/libopenblas.so.0" ]; then
  xz -dk "$HERE/lib/libopenblas.so.0.xz" 2>/dev/null ||
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3], "wb"))' \
      "$HERE/lib/libopenblas.so.0.xz"
fi
export LD_LIBRARY_PATH="$HERE/lib:/usr/local/cuda/lib64${cuda_libs:+:$cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FLEETBENCH_GPU_MODULE="${FLEETBENCH_GPU_MODULE:-$(dirname "$FB")/libfleetbench_gpu.so}"
