#!/usr/bin/env python3
"""summarize.py BASE < ab.sh output: per round, each variant's iops and p50s
over BASE's in that round; prints median [min-max] of the ratios."""
import sys, re, statistics, collections
base = sys.argv[1]
rounds = collections.defaultdict(dict)
for line in sys.stdin:
    m = re.match(r'round (\d+) \[(.*?)\] iops ([\d.]+) write_p50 ([\d.]+) fsync_p50 ([\d.]+)', line)
    if m: rounds[m[1]][m[2]] = tuple(map(float, m.groups()[2:5]))
names = []
for r in rounds.values():
    for n in r:
        if n not in names: names.append(n)
for n in names:
    vals = [r[n] for r in rounds.values() if n in r]
    rat = [[r[n][i] / r[base][i] for r in rounds.values() if n in r and base in r and r[base][i] > 0] for i in range(3)]
    med = [statistics.median(v[i] for v in vals) for i in range(3)]
    s = ' | '.join(f'{statistics.median(x):.3f} [{min(x):.3f}-{max(x):.3f}]' for x in rat)
    print(f'{n:14s} n={len(vals)} iops {med[0]:.0f} w_p50 {med[1]:.1f} f_p50 {med[2]:.1f} | vs {base}: iops | write p50 | fsync p50: {s}')
