#!/usr/bin/python3
"""One rank of torch.distributed's gloo all-reduce over a doubling sweep.

The reference for bench/gloo_vs_torch.sh: the same sizes, iterations and
warm-up as fleetbench's gloo engine, float32 sum, timed the same way (wall
clock around each operation, mean per rank, the slowest rank's). Rank 0
prints: bytes time_us algbw_GBps busbw_GBps (GB = 1e9 B, nccl-tests' factor
2(n-1)/n), one line per size.

Usage: torch_gloo_allreduce.py RANK SIZE STORE_FILE MIN_BYTES MAX_BYTES ITERS WARMUP
"""
import sys
import time

import torch
import torch.distributed as dist


def sweep(lo, hi):
    sizes, b = [], lo
    while b <= hi:
        sizes.append(b)
        if b > hi // 2:
            break
        b *= 2
    if sizes[-1] != hi:
        sizes.append(hi)
    return sizes


def main():
    rank, size, store, lo, hi, iters, warmup = sys.argv[1:8]
    rank, size, lo, hi, iters, warmup = (int(rank), int(size), int(lo), int(hi),
                                         int(iters), int(warmup))
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank,
                            world_size=size)
    torch.set_num_threads(1)
    for nbytes in sweep(lo, hi):
        count = nbytes // 4 // size * size
        t = torch.zeros(count, dtype=torch.float32)
        for _ in range(warmup):
            dist.all_reduce(t)
        total = 0.0
        for _ in range(iters):
            start = time.perf_counter()
            dist.all_reduce(t)
            total += time.perf_counter() - start
        mine = torch.tensor([total / iters], dtype=torch.float64)
        dist.all_reduce(mine, op=dist.ReduceOp.MAX)
        if rank == 0:
            seconds = mine.item()
            algbw = count * 4 / seconds / 1e9
            print("%d %.3f %.4f %.4f" % (count * 4, seconds * 1e6, algbw,
                                         algbw * 2 * (size - 1) / size), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
