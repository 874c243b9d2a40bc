#!/usr/bin/env python3
"""compare_npy.py GOT EXPECTED [--rtol R] [--atol A]: prints MATCH <shape>
or MISMATCH with the worst difference (exit 1)."""
import argparse
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("got")
ap.add_argument("expected")
ap.add_argument("--rtol", type=float, default=1e-5)
ap.add_argument("--atol", type=float, default=1e-5)
a = ap.parse_args()
got, exp = np.load(a.got), np.load(a.expected)
if got.shape != exp.shape or got.dtype != exp.dtype:
    print("MISMATCH shape/dtype", got.shape, got.dtype, exp.shape, exp.dtype)
    sys.exit(1)
if not np.allclose(got, exp, rtol=a.rtol, atol=a.atol):
    print("MISMATCH max abs diff", float(np.max(np.abs(got - exp))))
    sys.exit(1)
print("MATCH", list(got.shape), str(got.dtype))
