#!/usr/bin/env python3
"""The goodput model of controller/ranking/goodput.h against a direct
simulation of the job it describes (docs/ranking.md, Goodput).

Each case: nodes interrupted at `rate` per node-hour, a job of N nodes that
checkpoints every C hours of progress and restarts in R hours; 10,000 jobs
of 24 hours of progress each, interruptions drawn as exponential gaps, the
work since the last checkpoint lost at each. Prints the model's goodput,
the simulated one (progress over wall time, all jobs together) and their
ratio. GoodputTest runs the same simulation in C++ and requires 2%.

Usage: bench/goodput_vs_simulation.py [SEED]
"""
import math
import random
import sys


def model(rate, nodes, interval_h, restart_h):
    job_rate = rate * nodes
    x = job_rate * interval_h
    return x / math.expm1(x) / (1 + job_rate * restart_h)


def simulate(rate, nodes, interval_h, restart_h, work_h=24, jobs=10000, seed=1):
    rnd = random.Random(seed)
    job_rate = rate * nodes
    wall = 0.0
    for _ in range(jobs):
        done = 0.0
        while done < work_h:
            segment = min(interval_h, work_h - done)
            failure = rnd.expovariate(job_rate)
            if failure >= segment:
                wall += segment
                done += segment
            else:
                wall += failure + restart_h
    return work_h * jobs / wall


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    cases = [(0.001, 1, 0.5, 10 / 60), (0.002, 64, 0.5, 10 / 60), (0.002, 512, 0.5, 10 / 60),
             (0.0005, 1024, 2.0, 20 / 60), (0.01, 128, 0.25, 5 / 60)]
    print("rate_per_node_h  nodes  checkpoint_h  restart_h  model   simulated  ratio")
    for rate, nodes, interval_h, restart_h in cases:
        m = model(rate, nodes, interval_h, restart_h)
        s = simulate(rate, nodes, interval_h, restart_h, seed=seed)
        print(f"{rate:<16} {nodes:<6} {interval_h:<13} {restart_h:<10.3f} {m:.4f}  {s:.4f}     {m / s:.4f}")


if __name__ == "__main__":
    main()
