#!/usr/bin/env python3
"""numpy's matmul timed the way the gemm plugin times cblas_?gemm: float32
or float64 C = op(A) @ op(B), A stored (m, k) or (k, m) when transposed, B
(k, n) or (n, k), uniform [-1, 1) values, `warmup` untimed calls, then
calls timed one by one until `min_seconds` and at least 3 calls (or
`max_runs`); prints the median TFLOP/s (2·m·n·k per call).

Usage: numpy_gemm.py DTYPE M N K TRANSA TRANSB MIN_SECONDS [MAX_RUNS] [WARMUP]
Run with /usr/bin/python3 (Debian's numpy, linked to the system OpenBLAS).
"""
import statistics
import sys
import time

import numpy as np


def main():
    dtype, m, n, k, ta, tb, min_seconds = sys.argv[1:8]
    max_runs = int(sys.argv[8]) if len(sys.argv) > 8 else 50
    warmup = int(sys.argv[9]) if len(sys.argv) > 9 else 1
    m, n, k, min_seconds = int(m), int(n), int(k), float(min_seconds)
    np_type = {"fp32": np.float32, "fp64": np.float64}[dtype]
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (k, m) if ta == "T" else (m, k)).astype(np_type)
    b = rng.uniform(-1, 1, (n, k) if tb == "T" else (k, n)).astype(np_type)
    op_a = a.T if ta == "T" else a
    op_b = b.T if tb == "T" else b
    c = np.empty((m, n), dtype=np_type)
    for _ in range(warmup):
        np.matmul(op_a, op_b, out=c)
    rates, total = [], 0.0
    while len(rates) < max_runs and not (total >= min_seconds and len(rates) >= 3):
        start = time.perf_counter()
        np.matmul(op_a, op_b, out=c)
        seconds = time.perf_counter() - start
        total += seconds
        rates.append(2.0 * m * n * k / seconds / 1e12)
    print(statistics.median(rates))


if __name__ == "__main__":
    main()
