#!/usr/bin/env python3
"""Checks `kiln profile` on synthetic traces and on a real ONNX Runtime one.

Usage: check_profile_tool.py --kiln PATH_TO_KILN --work DIR

- a kiln-style trace (2 runs, Node and Kernel events, partition Session events
  that must not count): exact per-run numbers of every table;
- the same events wrapped in {"traceEvents": [...]}, and without model_run
  events (runs counted from node repeats); a trace of partitions only (kiln
  --no-profile-hooks) summarizes its partitions;
- an ORT-style trace with fences: --compare against the kiln one, exact
  ratios, "-" where one side lacks an op type, the total row;
- a profile ONNX Runtime writes itself (enable_profiling): op types, runs,
  per-node means, and --compare against it;
- --html: the page parses as XML, has inline <svg> bars and <table>s, escapes
  node names and references nothing external;
- errors: a missing file, a non-JSON file, a JSON object that is no profile:
  exit 1 and one stderr line naming the file; bad usage exit 2; --help exit 0.

Exit 0 when every check passes, 1 otherwise; each failure is printed.
"""

import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def kiln_profile(kiln, *args):
    return subprocess.run([kiln, "profile", *args], capture_output=True,
                          text=True, timeout=120)


def section(stdout, title):
    """Rows (lists of cells) of the table under the line `title`."""
    lines = stdout.splitlines()
    if title not in lines:
        return None
    rows = []
    for line in lines[lines.index(title) + 1:]:
        if not line.strip():
            break
        cells = line.split()
        if all(set(c) == {"-"} for c in cells):
            continue  # a rule
        rows.append(cells)
    return rows[1:]  # drop the header


def event(cat, name, ts, dur, **args):
    return {"cat": cat, "name": name, "ph": "X", "ts": ts, "dur": dur,
            "pid": 7, "tid": 0, "args": args}


RELU = 'relu_"a&b<c>"'  # must come out escaped in the HTML


def kiln_trace(with_runs=True):
    """2 runs; per run conv_1 100/140, conv_2 60/80, RELU 10/30 us on the
    CPU and gemm_k 200/200 us on the GPU; partition events are 5000 us."""
    cpu, cuda = "CPUExecutionProvider", "CUDAExecutionProvider"
    events = []
    for run, (c1, c2, r1, g) in enumerate([(100, 60, 10, 200),
                                           (140, 80, 30, 200)]):
        t = run * 100000
        if with_runs:
            events.append(event("Session", "model_run", t, 9000))
        events += [
            event("Session", "cpu_0", t + 1, 5000, provider=cpu,
                  op_name="partition"),
            event("Node", "conv_1_kernel_time", t + 10, c1, op_name="Conv",
                  provider=cpu, input_type_shape=[{"float": [1, 3, 8, 8]}],
                  output_size="1024"),
            event("Node", "conv_2_kernel_time", t + 200, c2, op_name="Conv",
                  provider=cpu, fused_nodes=["conv_2", "relu_2"]),
            event("Node", RELU + "_kernel_time", t + 300, r1,
                  op_name="Relu", provider=cpu),
            event("Kernel", "gemm_k", t + 400, g, op_name="Gemm",
                  provider=cuda),
        ]
    return events


def ort_style_trace():
    """3 runs with ORT's fences (ignored): Conv 285, Relu 10, MatMul 50
    us/run."""
    cpu = "CPUExecutionProvider"
    events = [event("Session", "model_loading_uri", 0, 300),
              event("Session", "session_initialization", 300, 2000)]
    for run, (ca, mm) in enumerate([(190, 40), (200, 50), (210, 60)]):
        t = 10000 + run * 10000
        events.append(event("Session", "model_run", t, 800))
        events.append(event("Session", "SequentialExecutor::Execute", t + 1,
                            700))
        for name, op, dur in [("conv_a", "Conv", ca), ("conv_b", "Conv", 85),
                              ("relu", "Relu", 10), ("matmul", "MatMul", mm)]:
            events += [
                event("Node", name + "_fence_before", t + 2, 1000,
                      op_name=op),
                event("Node", name + "_kernel_time", t + 3, dur, op_name=op,
                      provider=cpu),
                event("Node", name + "_fence_after", t + 4, 1000, op_name=op),
            ]
    return events


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f)
    return path


def make_ort_profile(work, runs):
    """Profiles MatMul+Add+Relu+Softmax in ONNX Runtime; returns the path."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.random((16, 8), dtype=np.float32), "W")
    b = numpy_helper.from_array(rng.random(8, dtype=np.float32), "B")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
         helper.make_node("Add", ["m", "B"], ["a"], name="add"),
         helper.make_node("Relu", ["a"], ["r"], name="relu"),
         helper.make_node("Softmax", ["r"], ["y"], name="sm", axis=1)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [w, b])
    # IR 8 / opset 17: loadable by older ORT builds too.
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    so = ort.SessionOptions()
    so.enable_profiling = True
    # Keep the four nodes apart (ORT would fuse MatMul+Add otherwise).
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.profile_file_prefix = os.path.join(work, "ort_profile")
    session = ort.InferenceSession(model.SerializeToString(), so,
                                   providers=["CPUExecutionProvider"])
    for _ in range(runs):
        session.run(None, {"x": rng.random((4, 16), dtype=np.float32)})
    return session.end_profiling()


def ort_stats(path):
    """Per-op-type us/run and per-node us/run computed from an ORT file."""
    events = json.load(open(path))
    runs = sum(1 for e in events
               if e.get("cat") == "Session" and e.get("name") == "model_run")
    per_op, per_node = {}, {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            op = e["args"]["op_name"]
            node = e["name"][:-len("_kernel_time")]
            per_op[op] = per_op.get(op, 0) + e["dur"] / runs
            per_node[node] = per_node.get(node, 0) + e["dur"] / runs
    return runs, per_op, per_node


def check_kiln_summary(kiln, work):
    path = write_json(os.path.join(work, "kiln_synth.json"), kiln_trace())
    p = kiln_profile(kiln, path)
    if not check(p.returncode == 0,
                 f"kiln-style trace: exit {p.returncode}: {p.stderr}"):
        return None
    out = p.stdout
    check(out.splitlines()[0] ==
          f"{path}: 2 runs, 4 nodes, 0.410 ms/run in nodes and kernels",
          "kiln-style header line: " + out.splitlines()[0])
    check(section(out, "By op type:") == [
        ["Gemm", "1", "0.200", "48.8", "200.0"],
        ["Conv", "2", "0.190", "46.3", "95.0"],
        ["Relu", "1", "0.020", "4.9", "20.0"]],
        f"kiln-style op table: {section(out, 'By op type:')}")
    check(section(out, "By provider:") == [
        ["CPUExecutionProvider", "3", "0.210", "51.2", "70.0"],
        ["CUDAExecutionProvider", "1", "0.200", "48.8", "200.0"]],
        f"kiln-style provider table: {section(out, 'By provider:')}")
    nodes = section(out, "Nodes:")
    check(nodes == [
        ["gemm_k", "Gemm", "CUDAExecutionProvider", "200.0", "48.8"],
        ["conv_1", "Conv", "CPUExecutionProvider", "120.0", "29.3"],
        ["conv_2", "Conv", "CPUExecutionProvider", "70.0", "17.1",
         "conv_2,relu_2"],
        [RELU, "Relu", "CPUExecutionProvider", "20.0", "4.9"]],
        f"kiln-style node table: {nodes}")
    check("cpu_0" not in out, "a partition Session event was counted")

    p = kiln_profile(kiln, "--top", "2", path)
    check(section(p.stdout, "Top 2 of 4 nodes:") is not None and
          [r[0] for r in section(p.stdout, "Top 2 of 4 nodes:")] ==
          ["gemm_k", "conv_1"], f"--top 2: {p.stdout}")
    p = kiln_profile(kiln, path, "--top=0")
    check(p.returncode == 0 and "Nodes:" not in p.stdout and
          "Top " not in p.stdout, "--top=0 still lists nodes")

    wrapped = write_json(os.path.join(work, "wrapped.json"),
                         {"traceEvents": kiln_trace(), "displayTimeUnit": "ms"})
    p = kiln_profile(kiln, wrapped)
    check(p.returncode == 0 and
          p.stdout.split("\n", 1)[1] == out.split("\n", 1)[1],
          "a {\"traceEvents\": [...]} object summarizes differently: "
          + p.stdout + p.stderr)

    no_runs = write_json(os.path.join(work, "no_runs.json"),
                         kiln_trace(with_runs=False))
    p = kiln_profile(kiln, no_runs)
    first = p.stdout.splitlines()[0] if p.stdout else p.stderr
    check(p.returncode == 0 and " 2 runs" in first and "0.410 ms/run" in first,
          "without model_run events runs should come from node repeats: "
          + first)

    # kiln --no-profile-hooks: runs and partitions only, which then stand in
    # for the nodes; ORT-style session events without a provider never do.
    parts = []
    for run in range(2):
        t = run * 10000
        parts += [event("Session", "model_run", t, 900),
                  event("Session", "session_initialization", t, 7000),
                  event("Session", "cpu_0", t + 1, 300 + 100 * run,
                        provider="CPUExecutionProvider"),
                  event("Session", "cuda_1", t + 500, 150,
                        provider="CUDAExecutionProvider")]
    partitions = write_json(os.path.join(work, "partitions.json"), parts)
    p = kiln_profile(kiln, partitions)
    first = p.stdout.splitlines()[0] if p.stdout else p.stderr
    check(p.returncode == 0 and first.startswith(
        f"{partitions}: 2 runs, 2 partitions, 0.500 ms/run in partitions"),
        "a partitions-only trace: " + first)
    check(section(p.stdout, "By provider:") == [
        ["CPUExecutionProvider", "1", "0.350", "70.0", "350.0"],
        ["CUDAExecutionProvider", "1", "0.150", "30.0", "150.0"]],
        f"partitions-only provider table: {section(p.stdout, 'By provider:')}")
    return path


def check_compare_synthetic(kiln, work, kiln_path):
    ort_path = write_json(os.path.join(work, "ort_synth.json"),
                          ort_style_trace())
    p = kiln_profile(kiln, ort_path)
    check(p.returncode == 0 and p.stdout.startswith(
        f"{ort_path}: 3 runs, 4 nodes, 0.345 ms/run"),
        "ORT-style trace (fences must not count): " + p.stdout + p.stderr)
    p = kiln_profile(kiln, "--compare", kiln_path, ort_path)
    if not check(p.returncode == 0, f"--compare: exit {p.returncode}: "
                 + p.stderr):
        return
    header = [l for l in p.stdout.splitlines()
              if l.startswith("  op type ")]
    check(header and header[0].split() ==
          ["op", "type", "kiln_synth.json", "ms/run", "ort_synth.json",
           "ms/run", "B/A"], f"--compare headers: {header}")
    rows = section(p.stdout, "By op type, ms/run:")
    check(rows == [["Gemm", "0.200", "-", "-"],
                   ["Conv", "0.190", "0.285", "1.50"],
                   ["Relu", "0.020", "0.010", "0.50"],
                   ["MatMul", "-", "0.050", "-"],
                   ["total", "0.410", "0.345", "0.84"]],
          f"--compare op rows: {rows}")


def check_real_ort(kiln, work, kiln_path):
    try:
        ort_path = make_ort_profile(work, runs=5)
    except Exception as e:  # ImportError or an ORT failure
        check(False, f"cannot make an ONNX Runtime profile: {e!r}")
        return None
    runs, per_op, per_node = ort_stats(ort_path)
    check(runs == 5, f"ORT wrote {runs} model_run events, expected 5")
    p = kiln_profile(kiln, ort_path)
    if not check(p.returncode == 0,
                 f"real ORT profile: exit {p.returncode}: {p.stderr}"):
        return None
    check(f": {runs} runs, 4 nodes," in p.stdout.splitlines()[0],
          "real ORT header: " + p.stdout.splitlines()[0])
    ops = section(p.stdout, "By op type:") or []
    check(sorted(r[0] for r in ops) == ["Add", "MatMul", "Relu", "Softmax"],
          f"real ORT op types: {ops}")
    for row in ops:
        check(abs(float(row[2]) - per_op[row[0]] / 1000) <= 0.0006,
              f"real ORT {row[0]}: {row[2]} ms/run, expected "
              f"{per_op[row[0]] / 1000:.4f}")
    providers = section(p.stdout, "By provider:") or []
    check([r[0] for r in providers] == ["CPUExecutionProvider"],
          f"real ORT providers: {providers}")
    for row in section(p.stdout, "Nodes:") or []:
        check(abs(float(row[3]) - per_node[row[0]]) <= 0.051,
              f"real ORT node {row[0]}: {row[3]} us/run, expected "
              f"{per_node[row[0]]:.2f}")

    p = kiln_profile(kiln, "--compare", kiln_path, ort_path)
    rows = {r[0]: r for r in section(p.stdout, "By op type, ms/run:") or []}
    check(p.returncode == 0 and set(rows) ==
          {"Gemm", "Conv", "Relu", "MatMul", "Add", "Softmax", "total"},
          f"--compare kiln vs ORT rows: {sorted(rows)} {p.stderr}")
    for op in ("Gemm", "Conv", "MatMul", "Add", "Softmax"):
        check(op in rows and rows[op][3] == "-",
              f"--compare: {op} is on one side only, B/A should be '-': "
              f"{rows.get(op)}")
    if "Relu" in rows:
        want = per_op["Relu"] / 20.0  # kiln_synth: Relu 20 us/run
        check(abs(float(rows["Relu"][3]) - want) <= 0.006 + want * 1e-6,
              f"--compare Relu B/A {rows['Relu'][3]}, expected {want:.3f}")
    return ort_path


def check_html(kiln, work, kiln_path, ort_path):
    pages = [("summary", [kiln_path]),
             ("compare", ["--compare", kiln_path, ort_path])]
    for what, args in pages:
        out = os.path.join(work, f"{what}.html")
        if os.path.exists(out):
            os.remove(out)
        p = kiln_profile(kiln, *args, "--html", out)
        if not check(p.returncode == 0 and os.path.exists(out),
                     f"--html ({what}): exit {p.returncode}: {p.stderr}"):
            continue
        text = open(out, encoding="utf-8").read()
        check(text.startswith("<!DOCTYPE html>"),
              f"--html ({what}): no <!DOCTYPE html> first")
        try:
            root = ET.fromstring(text)
        except ET.ParseError as e:
            check(False, f"--html ({what}): not well-formed XML: {e}")
            continue
        check(root.tag == "{http://www.w3.org/1999/xhtml}html",
              f"--html ({what}): root element {root.tag}")
        local = [(el.tag.rsplit("}", 1)[-1], el) for el in root.iter()]
        names = {name for name, _ in local}
        check("svg" in names and "rect" in names,
              f"--html ({what}): no inline <svg> with bars")
        check("table" in names, f"--html ({what}): no <table>")
        for bad in ("script", "link", "img", "iframe", "object", "embed"):
            check(bad not in names, f"--html ({what}): has a <{bad}>")
        for name, el in local:
            for attr, value in el.attrib.items():
                attr = attr.rsplit("}", 1)[-1]
                if attr in ("src", "href", "action", "data"):
                    check("http" not in value and "//" not in value,
                          f"--html ({what}): external {attr}={value!r}")
        styles = "".join(el.text or "" for name, el in local
                         if name == "style")
        check("url(" not in styles and "@import" not in styles,
              f"--html ({what}): the style loads something")
        cells = {"".join(el.itertext()) for name, el in local
                 if name in ("td", "th")}
        check("Conv" in cells and "Gemm" in cells,
              f"--html ({what}): op types missing from the tables")
        if what == "summary":
            check(RELU in cells, f"--html: node {RELU} not in a table cell")
            check(RELU not in text,
                  "--html: the node name with & < > \" is not escaped")
            bars = [el for name, el in local if name == "rect"]
            check(len(bars) >= 3 + 2, f"--html: {len(bars)} bars, expected "
                  "one per op type and per provider")
        else:
            headers = " ".join(el.text or "" for name, el in local
                               if name == "th")
            check("kiln_synth.json" in headers and
                  os.path.basename(ort_path) in headers,
                  f"--html (compare): file names not in headers: {headers}")


def check_errors(kiln, work):
    not_json = os.path.join(work, "not_json.json")
    with open(not_json, "w") as f:
        f.write("this is not JSON\n")
    not_profile = write_json(os.path.join(work, "object.json"),
                             {"model": "x", "nodes": [1, 2]})
    no_events = write_json(os.path.join(work, "no_events.json"),
                           [event("Session", "model_run", 0, 10)])
    missing = os.path.join(work, "does_not_exist.json")
    for path in (not_json, not_profile, no_events, missing):
        p = kiln_profile(kiln, path)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1, f"{path}: exit {p.returncode}, expected 1")
        check(len(lines) == 1 and path in lines[0] and
              lines[0].startswith("kiln profile: error: "),
              f"{path}: stderr should be one error line naming the file: "
              f"{p.stderr!r}")
        check(p.stdout == "", f"{path}: printed to stdout on error")
    p = kiln_profile(kiln, not_profile)
    check("not a profile" in p.stderr, "a JSON object that is no profile: "
          + p.stderr)
    for args in ([], ["a.json", "b.json"], ["--compare", "a.json"],
                 ["--top", "x", "a.json"], ["--frobnicate", "a.json"]):
        p = kiln_profile(kiln, *args)
        check(p.returncode == 2 and "usage: kiln profile" in p.stderr,
              f"bad usage {args}: exit {p.returncode}, stderr {p.stderr!r}")
    p = kiln_profile(kiln, "--help")
    check(p.returncode == 0 and p.stdout.startswith("usage: kiln profile"),
          f"--help: exit {p.returncode}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True, help="the kiln binary")
    parser.add_argument("--work", required=True, help="scratch directory")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    kiln = os.path.abspath(args.kiln)
    if not os.access(kiln, os.X_OK):
        print(f"FAIL: {kiln} is not an executable")
        return 1

    kiln_path = check_kiln_summary(kiln, args.work)
    if kiln_path:
        check_compare_synthetic(kiln, args.work, kiln_path)
        ort_path = check_real_ort(kiln, args.work, kiln_path)
        if ort_path:
            check_html(kiln, args.work, kiln_path, ort_path)
    check_errors(kiln, args.work)

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("kiln profile: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
