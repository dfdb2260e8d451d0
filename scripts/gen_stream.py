#!/usr/bin/env python3
"""Writes a synthetic LibSVM stream with d = 16 dense features to standard output.

    python3 scripts/gen_stream.py --task cls --rows 1000000 [--seed 6] > cls.svm
    python3 scripts/gen_stream.py --task reg --rows 10000000 | kestrel stream --input - --dim 16 ...

Rows: x ~ N(0, 1)^16 rounded to 3 decimals (clipped to ±9.999), every feature written.
  cls: label +1/-1 = sign(w·x + 0.5 ε), w a fixed random unit vector (binary, for svm).
  reg: target y = sin(2 x1) + x2 x3 / 2 + x4 + 0.1 ε (regression, for slkl).
The stream is a pure function of (task, seed, row count): chunks of 100 000 rows are drawn
from one numpy Generator in order, so any prefix of a long stream equals the short stream.
Rows are built as fixed-width bytes with numpy (no per-number Python formatting), fast
enough (~10^6 rows/s) to feed `kestrel stream` through a pipe without a file on disk.
"""
import argparse
import sys

import numpy as np

DIM = 16
CHUNK = 100_000


def fixed(values, int_digits, decimals):
    """ASCII of `values` as `[+-]D.ddd` (int_digits before the point), shape (n, width)."""
    scale = 10 ** decimals
    limit = 10 ** int_digits - 1 / scale
    v = np.clip(values, -limit, limit)
    q = np.rint(np.abs(v) * scale).astype(np.int64)
    width = 1 + int_digits + 1 + decimals
    out = np.empty((len(values), width), dtype=np.uint8)
    out[:, 0] = np.where(v < 0, ord("-"), ord("+"))
    digits = []
    for _ in range(int_digits + decimals):
        digits.append(q % 10)
        q //= 10
    digits.reverse()  # most significant first
    col = 1
    for k, d in enumerate(digits):
        if k == int_digits:
            out[:, col] = ord(".")
            col += 1
        out[:, col] = ord("0") + d
        col += 1
    return out


def rows(task, x, rng, w):
    """One chunk of LibSVM rows as bytes."""
    n = len(x)
    noise = rng.standard_normal(n)
    if task == "cls":
        label = np.where(x @ w + 0.5 * noise >= 0, 1.0, -1.0)
        parts = [fixed(label, 1, 0)[:, :2]]  # "+1" / "-1"
    else:
        y = np.sin(2 * x[:, 0]) + 0.5 * x[:, 1] * x[:, 2] + x[:, 3] + 0.1 * noise
        parts = [fixed(y, 2, 4)]
    for j in range(DIM):
        prefix = np.frombuffer(f" {j + 1}:".encode(), dtype=np.uint8)
        parts.append(np.broadcast_to(prefix, (n, len(prefix))))
        parts.append(fixed(x[:, j], 1, 3))
    parts.append(np.full((n, 1), ord("\n"), dtype=np.uint8))
    return np.hstack(parts).tobytes()


def generate(task, count, seed, out):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(DIM)
    w /= np.linalg.norm(w)
    left = count
    while left > 0:
        n = min(CHUNK, left)
        x = np.round(rng.standard_normal((CHUNK, DIM)), 3)[:n]
        out.write(rows(task, x, rng, w))
        left -= n


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=["cls", "reg"], required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    try:
        generate(args.task, args.rows, args.seed, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        pass


if __name__ == "__main__":
    main()
