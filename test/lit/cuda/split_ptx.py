"""Splits `kiln --emit=ptx` output into one file per kernel module."""
import sys

src, prefix = sys.argv[1], sys.argv[2]
n, out = 0, None
for line in open(src):
    if line.startswith("// kernels of"):
        n += 1
        out = open(f"{prefix}{n}.ptx", "w")
        continue
    if out:
        out.write(line)
print(f"{n} kernel modules")
sys.exit(0 if n else 1)
