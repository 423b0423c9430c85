#!/usr/bin/env python3
"""Summarises alternating-round comparisons for the bench/*_vs_*.sh scripts.

Reads lines "CASE ROUND OURS REFERENCE" (numbers, higher is better) on
stdin and prints, per case, the median of OURS and REFERENCE, and the median
and min-max of the per-round ratio OURS/REFERENCE. Nothing is asserted.
"""
import statistics
import sys


def main():
    cases = {}
    order = []
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 4:
            continue
        case, _, ours, ref = parts[0], parts[1], float(parts[2]), float(parts[3])
        if case not in cases:
            cases[case] = []
            order.append(case)
        cases[case].append((ours, ref))
    print(f"{'case':<28} {'rounds':>6} {'ours':>12} {'reference':>12} "
          f"{'ratio median':>12}  min-max")
    for case in order:
        rows = cases[case]
        ratios = [o / r for o, r in rows if r > 0]
        print(f"{case:<28} {len(rows):>6} "
              f"{statistics.median(o for o, _ in rows):>12.4g} "
              f"{statistics.median(r for _, r in rows):>12.4g} "
              f"{statistics.median(ratios):>12.3f}  "
              f"{min(ratios):.3f}-{max(ratios):.3f}")


if __name__ == "__main__":
    main()
