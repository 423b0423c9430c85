#!/usr/bin/python3
"""A data-preparation step with no dependency beyond Python itself: parse,
normalise and hash JSON records, as a tokenising or deduplicating pass
over a corpus does. The demo's workload: it runs on any node.

Prints records/s (the median of --rounds timed rounds) as a
FLEETBENCH_METRIC line.
"""
import argparse
import hashlib
import json
import random
import statistics
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--records", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    rng = random.Random(0)
    words = ["gpu", "node", "train", "step", "batch", "loss", "token", "cloud", "region", "price"]
    lines = [json.dumps({"id": i, "text": " ".join(rng.choice(words) for _ in range(24))})
             for i in range(a.records)]
    print(f"{a.records} records ready", flush=True)
    rates = []
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        seen = set()
        for line in lines:
            text = json.loads(line)["text"].lower().split()
            seen.add(hashlib.blake2b(" ".join(sorted(text)).encode(), digest_size=8).digest())
        rates.append(a.records / (time.perf_counter() - t0))
        print(f"round {len(rates)}: {rates[-1]:.0f} records/s, {len(seen)} distinct", flush=True)
    print("FLEETBENCH_METRIC " + json.dumps({"name": "records_per_s",
          "value": statistics.median(rates), "unit": "records/s", "direction": "higher"}),
          flush=True)


if __name__ == "__main__":
    main()
