#!/usr/bin/python3
"""One epoch of torch.utils.data.DataLoader over a folder of small files
(the smallfiles benchmark's dataset, or a team's own): N workers read and,
when Pillow is installed, decode each image. The rate a GPU would be fed
at, and the story fleetbench exists for: a fast GPU starved by a slow
data disk.

Prints images/s and MB/s as FLEETBENCH_METRIC lines.
"""
import argparse
import json
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset

try:
    from PIL import Image
    import io
except ImportError:  # read-only: the rate of the disk and the loader alone
    Image = None


def metric(name, value, unit, direction):
    print("FLEETBENCH_METRIC " + json.dumps(
        {"name": name, "value": value, "unit": unit, "direction": direction}), flush=True)


class Files(Dataset):
    def __init__(self, root, limit):
        self.paths = []
        for folder, _, names in os.walk(root):
            self.paths.extend(os.path.join(folder, n) for n in sorted(names))
            if limit and len(self.paths) >= limit:
                break
        self.paths = self.paths[:limit] if limit else self.paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            data = f.read()
        if Image is not None:
            try:
                Image.open(io.BytesIO(data)).convert("RGB")
            except Exception:
                pass  # not a picture: counted as read
        return len(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--limit", type=int, default=0)
    a = p.parse_args()
    ds = Files(a.root, a.limit)
    if not ds.paths:
        raise SystemExit(f"no files under {a.root}")
    print(f"{len(ds)} files under {a.root}, {a.workers} workers", flush=True)
    loader = DataLoader(ds, batch_size=32, num_workers=a.workers, collate_fn=sum)
    t0 = time.perf_counter()
    total = sum(loader)
    took = time.perf_counter() - t0
    metric("images_per_s", len(ds) / took, "images/s", "higher")
    metric("read_mb_per_s", total / took / 1e6, "MB/s", "higher")


if __name__ == "__main__":
    main()
