#!/usr/bin/env python3
"""compare_text.py EXPECTED.npy < output: compares the numbers printed one
per line (after any header lines) with EXPECTED within a tolerance; prints
MATCH <count> or MISMATCH (exit 1)."""
import sys

import numpy as np

exp = np.load(sys.argv[1]).ravel()
vals = []
for line in sys.stdin:
    try:
        vals.append(float(line))
    except ValueError:
        continue
got = np.array(vals, dtype=np.float64)
if got.shape != exp.shape:
    print("MISMATCH count", got.size, "expected", exp.size)
    sys.exit(1)
if not np.allclose(got, exp, rtol=1e-5, atol=1e-5):
    print("MISMATCH max abs diff", float(np.max(np.abs(got - exp))))
    sys.exit(1)
print("MATCH", got.size)
