#!/usr/bin/env python3
"""where.py SECONDS PATTERN... : every 10 ms, for every thread of a process
whose name matches a pattern (fio, host_bench_cli), which CPU it last ran on;
prints the samples per CPU per thread name (iou-wrk-N is the io_uring
worker that runs the fsyncs)."""
import os, sys, time, collections, re
secs = float(sys.argv[1]); pats = [re.compile(p) for p in sys.argv[2:]]
count = collections.Counter()
end = time.time() + secs
tids = []; refresh = 0
while time.time() < end:
    if time.time() > refresh:
        refresh = time.time() + 0.5; tids = []
        for pid in os.listdir('/proc'):
            if not pid.isdigit(): continue
            try:
                comm = open(f'/proc/{pid}/comm').read().strip()
                if any(p.search(comm) for p in pats):
                    tids += [(pid, t) for t in os.listdir(f'/proc/{pid}/task')]
            except OSError: pass
    for pid, tid in tids:
        try: s = open(f'/proc/{pid}/task/{tid}/stat').read()
        except OSError: continue
        comm = s[s.index('(')+1:s.rindex(')')]
        f = s[s.rindex(')')+2:].split()
        count[(re.sub(r'\d+', 'N', comm), pid, tid == pid, f[36])] += 1
    time.sleep(0.01)
for (name, pid, main, cpu), n in sorted(count.items()):
    print(f'{pid:7s} {name:20s} {"main" if main else "thr ":4s} cpu{cpu} {n}')
