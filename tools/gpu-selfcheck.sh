#!/usr/bin/env bash
# GPU self-check, run on a GPU machine from a bundle made by tools/gpu-bundle.sh
# (binary, module and lib/ side by side). Writes JSON and a summary to $OUT
# (or ./gpu-selfcheck-results). Exits non-zero when no GPU is usable.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
FB="$HERE/fleetbench"
[ -x "$FB" ] || FB="$HERE/../build/cli/fleetbench"   # from a source tree
# cuBLAS(Lt) and NCCL from the machine: the toolkit, or PyTorch's wheels.
cuda_libs=$(python3 - 2>/dev/null <<'PY'
import importlib, os
dirs = []
for mod in ("nvidia.cublas", "nvidia.nccl", "nvidia.cuda_runtime"):
    try:
        m = importlib.import_module(mod)
        for p in m.__path__:
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
RESULTS=${OUT:-$PWD/gpu-selfcheck-results}
mkdir -p "$RESULTS"
SUMMARY="$RESULTS/summary.txt"
{
  echo "fleetbench GPU self-check, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname)"
  command -v nvidia-smi >/dev/null && nvidia-smi -L
} | tee "$SUMMARY"

# 1. Facts and findings (NVML), and whether any GPU benchmark can run.
"$FB" probe --bench gpu_gemm --param gpu_gemm.dtypes=bf16 --param gpu_gemm.sizes=1024 --json \
  > "$RESULTS/facts.json" 2> "$RESULTS/facts.err"
if ! grep -q '"uuid"' "$RESULTS/facts.json"; then
  echo "no GPU found: NVML reports no device (see $RESULTS/facts.json)" | tee -a "$SUMMARY"
  exit 2
fi

# 2. The GPU suite: GEMM per dtype at 8192, PCIe, HBM, NCCL all-reduce.
timeout 240 "$FB" probe --bench gpu_gemm,pcie,hbm,allreduce --json \
  > "$RESULTS/probe.json" 2> "$RESULTS/probe.err"
echo "probe exit: $?" | tee -a "$SUMMARY"
"$FB" probe --bench gpu_gemm,pcie,hbm --param gpu_gemm.dtypes=bf16 2>/dev/null | tee -a "$SUMMARY" >/dev/null

# 3. The reference: PyTorch bf16 8192^3 on the same GPU, when torch exists.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  python3 - <<'PY' | tee -a "$SUMMARY"
import torch
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for _ in range(10):
    a @ b
torch.cuda.synchronize()
times = []
for _ in range(20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); a @ b; e.record(); torch.cuda.synchronize()
    times.append(s.elapsed_time(e) / 1e3)
times.sort()
t = times[len(times) // 2]
print(f"torch.matmul bf16 {n}^3: {2 * n**3 / t / 1e12:.1f} TFLOP/s (median of 20)")
PY
else
  echo "torch.matmul reference: PyTorch with CUDA not available here" | tee -a "$SUMMARY"
fi
grep -E '"metric"|"value"' "$RESULTS/probe.json" | paste - - | sed 's/[",]//g' | tee -a "$SUMMARY"
echo "results in $RESULTS"
