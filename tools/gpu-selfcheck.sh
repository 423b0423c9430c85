#!/usr/bin/env bash
# GPU self-check, run on a GPU machine from a bundle made by tools/gpu-bundle.sh
# (binary, module and lib/ side by side). Writes JSON and a summary to $OUT
# (or ./gpu-selfcheck-results). Exits non-zero when no GPU is usable.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# The binary, its libraries and the GPU module (shared with the other GPU
# script): tools/gpu-env.sh, copied into the bundle beside this one.
if [ -f "$HERE/gpu-env.sh" ]; then . "$HERE/gpu-env.sh"; else . "$HERE/../tools/gpu-env.sh"; fi
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
