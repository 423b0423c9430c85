#!/usr/bin/env python3
"""bench/cli_pairs.py N 'COMMAND A' 'COMMAND B' — two commands run in turn,
A B A B ..., N pairs after one warm-up each, each timed as a whole process
from outside: wall from a monotonic clock around fork/exec/wait, CPU as the
user + system time wait4 reports for the child. Prints min/median/max of
each and of the pair-by-pair ratio A/B (pairing keeps the ratio fair when
the machine's speed drifts). Output is discarded (to /dev/null).

Used for the CLI call comparisons in docs/controller-speed.md (earlier ones
in docs/results-log.md, "The client binary"), e.g.
  bench/cli_pairs.py 33 "build/cli/fleetbench history --node rank-0500 ..." \\
                        "/tmp/old/fleetbench history --node rank-0500 ..."
"""
import os
import shlex
import statistics
import sys
import time


def run(argv):
    # posix_spawn, not fork then exec: glibc spawns with CLONE_VM|CLONE_VFORK,
    # so no copy of this Python process runs before the exec. A forked copy
    # touches its copy-on-write pages on the way to exec and that CPU is
    # charged to the child: 6-7 ms per command on this VM (/bin/true timed
    # 10.8 ms instead of perf stat's 3.8 ms), which inflated both sides and
    # pulled every ratio towards 1.
    start = time.monotonic()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ])
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3, os.waitstatus_to_exitcode(status)


def row(name, values, unit="ms"):
    lo, med, hi = min(values), statistics.median(values), max(values)
    fmt = "{:.3f}" if unit == "" else "{:.1f}"
    print(f"{name:<12} min {fmt.format(lo)}  median {fmt.format(med)}  max {fmt.format(hi)} {unit}")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    n = int(sys.argv[1])
    a, b = shlex.split(sys.argv[2]), shlex.split(sys.argv[3])
    run(a), run(b)  # warm-up: page cache, the controller's first statement
    results = {"A": [], "B": []}
    codes = set()
    for _ in range(n):
        for key, argv in (("A", a), ("B", b)):
            wall, cpu, code = run(argv)
            results[key].append((wall, cpu))
            codes.add((key, code))
    print("exit codes:", sorted(codes))
    for key in ("A", "B"):
        row(f"{key} wall", [w for w, _ in results[key]])
        row(f"{key} cpu", [c for _, c in results[key]])
    row("A/B wall", [x[0] / y[0] for x, y in zip(results["A"], results["B"])], "")
    row("A/B cpu", [x[1] / y[1] for x, y in zip(results["A"], results["B"]) if y[1] > 0], "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
