#!/usr/bin/env python3
"""Times a model on the GPU through PyTorch as a peer for kiln's CUDA
provider, where ONNX Runtime's CUDA provider cannot be had (its wheel is too
large to carry to the device machine, which reaches no registry).

  torch_peer.py MODEL_DIR [--wheels DIR] [--iterations N]

Converts MODEL_DIR/model.onnx with onnx2torch (a pure-Python wheel, imported
from --wheels), checks the outputs against MODEL_DIR/test_data_set_0 and
prints one JSON line: {"median_ms": ..., "max_abs_err": ...}, or
{"error": "..."} when the model does not convert or run.
"""
import argparse
import glob
import json
import os
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model_dir")
    p.add_argument("--wheels", default="")
    p.add_argument("--iterations", type=int, default=20)
    a = p.parse_args()
    for w in glob.glob(os.path.join(a.wheels, "*.whl")) if a.wheels else []:
        sys.path.insert(0, w)  # pure-Python wheels import as zip files
    try:
        import numpy as np
        import onnx
        import torch
        from onnx import numpy_helper
        from onnx2torch import convert
    except Exception as e:  # noqa: BLE001 - reported, not raised
        print(json.dumps({"error": f"import: {e}"}))
        return 0
    data = os.path.join(a.model_dir, "test_data_set_0")

    def load(pattern):
        out = []
        for f in sorted(glob.glob(os.path.join(data, pattern)),
                        key=lambda s: int(s.rsplit("_", 1)[1].split(".")[0])):
            t = onnx.TensorProto()
            with open(f, "rb") as fh:
                t.ParseFromString(fh.read())
            out.append(numpy_helper.to_array(t))
        return out

    try:
        dev = torch.device("cuda")
        model = convert(onnx.load(os.path.join(a.model_dir, "model.onnx")))
        model = model.to(dev).eval()
        inputs = [torch.from_numpy(np.ascontiguousarray(x)).to(dev)
                  for x in load("input_*.pb")]
        refs = load("output_*.pb")
        with torch.inference_mode():
            outs = model(*inputs)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            err = max(float(np.max(np.abs(o.float().cpu().numpy() -
                                          r.astype(np.float32))))
                      if r.size else 0.0 for o, r in zip(outs, refs))
            for _ in range(3):
                model(*inputs)
            torch.cuda.synchronize()
            times = []
            for _ in range(a.iterations):
                t0 = time.perf_counter()
                model(*inputs)
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        print(json.dumps({"median_ms": times[len(times) // 2],
                          "max_abs_err": err}))
    except Exception as e:  # noqa: BLE001 - a peer that fails is reported
        print(json.dumps({"error": str(e).splitlines()[0][:120]
                          if str(e) else type(e).__name__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
