#!/usr/bin/python3
"""Sluice vs PyTorch DataLoader on the same memory-mapped .npy data (docs/benchmarks.md).

Data: DIR/x.npy float32[N, 64] (256 bytes per row) and DIR/label.npy int64[N], written once with
numpy and page-cached before the run. Contenders, one after the other in one run, each with both
fields:

  sluice        `sluice bench DIR --shuffle --batch 256 --json` (shuffle -> shard(1 of 1) ->
                batch 256 -> prefetch 4; one warm-up epoch, then the median of --epochs epochs)
  torch-docs    a map-style per-sample Dataset over np.load(mmap_mode='r'), DataLoader(batch_size=256,
                shuffle=True), as PyTorch's docs show; best of num_workers 0 and 2
  torch-batched PyTorch's fastest variant: a BatchSampler(RandomSampler) handing 256 indices at once,
                sorted and fancy-indexed from the mapping, batch_size=None, num_workers=0

The per-sample loader is slow, so it is timed over --torch-batches batches after a warm-up of 20
batches, which its records/s does not depend on. Prints one line per contender and the ratios;
--json prints a JSON object as the last line.

Usage: /usr/bin/python3 benchmarks/torch_compare.py [--dir DIR] [--rows N] [--jar PATH] [--epochs E]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

DIM = 64  # float32 -> 256 bytes per row


class NpyDataset(Dataset):
    """Map-style, one sample per __getitem__, as the PyTorch data tutorial writes it."""

    def __init__(self, root):
        self.x = np.load(os.path.join(root, "x.npy"), mmap_mode="r")
        self.label = np.load(os.path.join(root, "label.npy"), mmap_mode="r")

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return torch.from_numpy(np.array(self.x[i])), torch.tensor(self.label[i])


class BatchedNpyDataset(NpyDataset):
    """__getitem__ takes a list of 256 indices and fancy-indexes them, sorted, in one go."""

    def __getitem__(self, indices):
        idx = np.sort(np.asarray(indices))
        return torch.from_numpy(self.x[idx]), torch.from_numpy(self.label[idx])


def write_data(root, rows):
    os.makedirs(root, exist_ok=True)
    x_path, l_path = os.path.join(root, "x.npy"), os.path.join(root, "label.npy")
    if os.path.exists(l_path) and np.load(l_path, mmap_mode="r").shape == (rows,):
        return
    rng = np.random.default_rng(0)
    x = np.lib.format.open_memmap(x_path, mode="w+", dtype=np.float32, shape=(rows, DIM))
    step = 1 << 18
    for s in range(0, rows, step):
        x[s:s + step] = rng.random((min(step, rows - s), DIM), dtype=np.float32)
    x.flush()
    del x
    np.save(l_path, np.arange(rows, dtype=np.int64))


def page_cache(root):
    for name in ("x.npy", "label.npy"):
        with open(os.path.join(root, name), "rb") as f:
            while f.read(1 << 24):
                pass


def time_loader(loader, batches, warmup=20):
    """records/s over `batches` batches after `warmup` batches (0 = one whole epoch)."""
    it = iter(loader)
    for _ in range(warmup):
        next(it)
    n = 0
    t0 = time.perf_counter()
    if batches == 0:
        for x, y in it:
            n += len(y)
    else:
        for _ in range(batches):
            x, y = next(it)
            n += len(y)
    return n / (time.perf_counter() - t0)


def sluice(jar, root, epochs):
    cmd = ["java", "-Xms1g", "-Xmx1g", "-jar", jar, "bench", root, "--shuffle", "--batch", "256",
           "--epochs", str(epochs), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("--dir", default="/tmp/sluice-bench/xl")
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--jar", default=os.path.join(here, "..", "examples", "target", "sluice.jar"))
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--torch-batches", type=int, default=300)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()

    write_data(a.dir, a.rows)
    page_cache(a.dir)
    print(f"data: {a.dir} ({a.rows} rows, x float32[{DIM}] + label int64); load {os.getloadavg()[0]:.2f}; "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads", flush=True)

    s = sluice(a.jar, a.dir, a.epochs)
    sluice_rps = s["recordsPerSecond"]
    print(f"sluice:        {sluice_rps:12.0f} records/s (median of {a.epochs} epochs, "
          f"min {s['recordsPerSecondMin']:.0f}, max {s['recordsPerSecondMax']:.0f})", flush=True)

    docs = {}
    for workers in (0, 2):
        loader = DataLoader(NpyDataset(a.dir), batch_size=256, shuffle=True, num_workers=workers)
        docs[workers] = time_loader(loader, a.torch_batches)
        print(f"torch-docs:    {docs[workers]:12.0f} records/s (num_workers={workers}, {a.torch_batches} batches)", flush=True)
    docs_best = max(docs.values())

    ds = BatchedNpyDataset(a.dir)
    sampler = BatchSampler(RandomSampler(ds), batch_size=256, drop_last=False)
    batched = time_loader(DataLoader(ds, sampler=sampler, batch_size=None, num_workers=0), 0)
    print(f"torch-batched: {batched:12.0f} records/s (num_workers=0, one whole epoch)", flush=True)

    r1, r2 = sluice_rps / docs_best, sluice_rps / batched
    print(f"sluice / torch-docs (best of 0, 2 workers): {r1:.1f}x (target >= 25x)")
    print(f"sluice / torch-batched:                     {r2:.2f}x (target >= 2.5x)")
    print(f"load after the run: {os.getloadavg()[0]:.2f}")
    if a.json:
        print(json.dumps({"sluice": sluice_rps, "torchDocs0": docs[0], "torchDocs2": docs[2],
                          "torchBatched": batched, "ratioDocs": r1, "ratioBatched": r2}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
