#!/usr/bin/env python3
"""make_chain_mlir.py N: a CPU partition holding a chain of N Relu ops."""
import sys

n = int(sys.argv[1])
t = "tensor<4xf32>"
print("func.func @long_chain(%%x: %s) -> %s {" % (t, t))
print('  %%p = kiln.partition "cpu_0" provider("cpu") -> %s {' % t)
prev = "%x"
for i in range(n):
    print("    %%r%d = onnx.Relu(%s) : (%s) -> %s" % (i, prev, t, t))
    prev = "%%r%d" % i
print("    kiln.yield %s : %s" % (prev, t))
print("  }")
print("  return %%p : %s" % t)
print("}")
