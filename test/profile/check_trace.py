#!/usr/bin/env python3
"""Per-node profiling on the CPU, end to end: compiles a model, runs it with
`kiln-run --profile`, and checks the trace against ONNX Runtime's schema
(trace_schema.py) and that the model's nodes appear under their own names:
every node left in the optimized graph that does work (all but shape-only
nodes, which compile to views, and shape arithmetic on int64 vectors) is an event or listed in an event's
fused_nodes, and an event of one node carries that node's op type. With --no-hooks, a library compiled
with --no-profile-hooks must show partitions only.

  check_trace.py --kiln K --kiln-run R --model M.onnx --work DIR [--min-coverage F]

Exit 0 pass, 1 fail, 77 (ctest SKIP) when the model does not exist.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402
import trace_schema  # noqa: E402

# Nodes that lower to no kernel of their own: views and shape arithmetic.
NO_KERNEL = {"Constant", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Shape",
             "Size", "Dropout"}


def kept_node_names(ir):
    """Node names in the locations of the non-constant ops of printed IR
    (with debug info), resolving #locN aliases."""
    alias = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))$", ir, re.M))
    names, seen = set(), set()

    def collect(text):
        for a in re.findall(r"#loc\d*", text):
            if a in alias and a not in seen:
                seen.add(a)
                collect(alias[a])
        names.update(re.findall(r'"((?:[^"\\]|\\.)*)"\(', text))

    for line in ir.splitlines():
        m = re.search(r'"?onnx\.(\w+)"?.*(loc\(.*\))\s*$', line)
        if m and m.group(1) not in ("Constant", "NoValue"):
            seen.clear()
            collect(m.group(2))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--min-coverage", type=float, default=0.9,
                    help="share of the model's working nodes that must appear")
    args = ap.parse_args()
    if not os.path.exists(args.model):
        print(f"SKIPPED: {args.model} not found (../shared/models is not part of a clone)")
        return 77
    checks = Checks()
    expect = checks.expect

    name = os.path.basename(os.path.dirname(os.path.abspath(args.model)))
    os.makedirs(args.work, exist_ok=True)
    traces = {}
    for hooks in (True, False):
        prefix = os.path.join(args.work, name + ("" if hooks else "_nohooks"))
        cmd = [args.kiln, "compile", args.model, "-o", prefix, "-q"] + \
              ([] if hooks else ["--no-profile-hooks"])
        if subprocess.call(cmd) != 0:
            print("FAIL: " + " ".join(cmd))
            return 1
        lib = os.path.join(os.path.dirname(prefix), f"lib{os.path.basename(prefix)}.so")
        trace = prefix + ".trace.json"
        cmd = [args.kiln_run, lib, "--iterations", "3", "--profile", trace]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print("FAIL: " + " ".join(cmd) + "\n" + p.stderr)
            return 1
        with open(trace) as f:
            traces[hooks] = json.load(f)

    events = traces[True]
    bad = trace_schema.problems(events)
    expect(not bad, "the trace follows ONNX Runtime's profile schema" +
           (f": {bad[:3]}" if bad else ""))
    runs = [e for e in events if e.get("name") == "model_run"]
    nodes = [e for e in events if e.get("cat") == "Node"]
    expect(len(runs) == 3, f"one model_run event per run ({len(runs)})")
    expect(nodes and len(nodes) % 3 == 0, f"the same node events in every run ({len(nodes)})")
    # Node events lie inside their run.
    inside = all(any(r["ts"] <= n["ts"] and n["ts"] + n["dur"] <= r["ts"] + r["dur"] + 0.01
                     for r in runs) for n in nodes)
    expect(inside, "every node event lies inside a model_run")

    model = onnx.load(args.model, load_external_data=False)
    op_of = {n.name: n.op_type for n in model.graph.node}
    # The nodes left in the optimized graph (constant folding computes the
    # others at compile time), by the names its locations hold.
    p = subprocess.run([args.kiln, "compile", args.model, "--emit=onnx-opt", "-q",
                        "--mlir-print-debuginfo"], capture_output=True, text=True)
    kept = kept_node_names(p.stdout)
    # Shape arithmetic (int64 values of rank <= 1 computed from Shape) is
    # no kernel either where a size is known only at run time: kiln sizes
    # each tensor from the bound symbols instead.
    inferred = onnx.shape_inference.infer_shapes(model)
    int_vectors = {v.name for v in inferred.graph.value_info
                   if v.type.tensor_type.elem_type == onnx.TensorProto.INT64 and
                   v.type.tensor_type.HasField("shape") and
                   len(v.type.tensor_type.shape.dim) <= 1}
    shape_only = {n.name for n in model.graph.node
                  if n.output and all(o in int_vectors for o in n.output)}
    working = [n.name for n in model.graph.node
               if n.op_type not in NO_KERNEL and n.name and n.name in kept and
               n.name not in shape_only]
    named = {e["name"][:-len("_kernel_time")]: e for e in nodes}
    listed = {f for e in nodes for f in e["args"].get("fused_nodes", [])}
    covered = [n for n in working if n in named or n in listed]
    share = len(covered) / len(working) if working else 1.0
    missing = [n for n in working if n not in covered]
    expect(share >= args.min_coverage,
           f"{len(covered)}/{len(working)} working nodes appear by name ({share:.0%}, "
           f"at least {args.min_coverage:.0%})" + (f"; missing e.g. {missing[:4]}" if missing else ""))
    # (A fusion is reported as the op it became, e.g. Attention.)
    wrong = [(n, e["args"]["op_name"], op_of[n]) for n, e in named.items()
             if n in op_of and e["args"]["op_name"] != op_of[n] and
             len(e["args"].get("fused_nodes", [])) <= 1]
    expect(not wrong, "each node event carries its node's op type" +
           (f": {wrong[:3]}" if wrong else ""))
    expect(all(e["args"]["provider"] == "CPUExecutionProvider" for e in nodes),
           "node events name the CPU provider as ONNX Runtime does")

    plain = traces[False]
    expect(not trace_schema.problems(plain) and
           not any(e.get("cat") == "Node" for e in plain) and
           any(e.get("cat") == "Session" and e.get("name") != "model_run" for e in plain),
           "--no-profile-hooks: partitions only")
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
