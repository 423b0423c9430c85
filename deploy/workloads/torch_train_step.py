#!/usr/bin/python3
"""A PyTorch CPU training step on synthetic data: the shape of a team's own
step (forward, loss, backward, optimizer) without its data pipeline.

Prints one FLEETBENCH_METRIC line (samples/s, the median of the timed
steps) after a warm-up. Run by hand it prints the same line, so the
figure through fleetbench can be compared with the script alone.
"""
import argparse
import json
import statistics
import time

import torch


def metric(name, value, unit, direction):
    print("FLEETBENCH_METRIC " + json.dumps(
        {"name": name, "value": value, "unit": unit, "direction": direction}), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(a.width, a.width), torch.nn.ReLU(),
        torch.nn.Linear(a.width, a.width), torch.nn.ReLU(),
        torch.nn.Linear(a.width, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(a.batch, a.width)
    y = torch.randint(0, 10, (a.batch,))
    print(f"model ready: width {a.width}, batch {a.batch}, {torch.get_num_threads()} threads",
          flush=True)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    metric("samples_per_s", a.batch / med, "samples/s", "higher")
    metric("step_ms", med * 1e3, "ms", "lower")


if __name__ == "__main__":
    main()
