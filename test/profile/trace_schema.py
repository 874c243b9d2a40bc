"""Checks a Chrome-trace profile against the schema ONNX Runtime's profiler
writes (and ort_perf_view, Perfetto and chrome://tracing read): a JSON array
of complete ("X") events; "Session" events for runs and partitions, "Node"
events named <node>_kernel_time with op_name, provider and the size and
shape args, "Kernel" events for device kernels and copies with the op_name
of what launched them; on each thread, events are disjoint or nested.
"""
import re

SIZE_ARGS = ("output_size", "parameter_size", "activation_size")
# Timestamps are printed with ns precision in microseconds.
EPS_US = 0.002


def _type_shapes(v):
    return isinstance(v, list) and all(
        isinstance(t, dict) and len(t) == 1 and
        all(isinstance(d, int) for d in next(iter(t.values()))) for t in v)


def problems(events):
    """A list of messages, empty when `events` follows the schema."""
    out = []
    if not isinstance(events, list):
        return ["the trace is not a JSON array of events"]
    for i, e in enumerate(events):
        where = f"event {i} ({e.get('name') if isinstance(e, dict) else e!r})"
        if not isinstance(e, dict):
            out.append(f"{where}: not an object")
            continue
        for key, kind in (("cat", str), ("name", str), ("ph", str), ("ts", (int, float)),
                          ("dur", (int, float)), ("pid", int), ("tid", int), ("args", dict)):
            if not isinstance(e.get(key), kind):
                out.append(f"{where}: `{key}` missing or not {kind}")
        if out and out[-1].startswith(where):
            continue
        if e["ph"] != "X" or e["ts"] < 0 or e["dur"] < 0:
            out.append(f"{where}: not a complete event with ts, dur >= 0")
        args = e["args"]
        if e["cat"] == "Node":
            if not e["name"].endswith("_kernel_time"):
                out.append(f"{where}: a Node event is named <node>_kernel_time")
            if not isinstance(args.get("op_name"), str) or not args["op_name"]:
                out.append(f"{where}: no args.op_name")
            if not str(args.get("provider", "")).endswith("ExecutionProvider"):
                out.append(f"{where}: args.provider is not an ONNX Runtime provider name")
            for k in SIZE_ARGS:
                if not re.fullmatch(r"\d+", str(args.get(k, ""))):
                    out.append(f"{where}: args.{k} is not a byte count string")
            for k in ("input_type_shape", "output_type_shape"):
                if not _type_shapes(args.get(k)):
                    out.append(f"{where}: args.{k} is not a list of {{dtype: [dims]}}")
        elif e["cat"] == "Kernel":
            if not isinstance(args.get("op_name"), str) or not args["op_name"]:
                out.append(f"{where}: no args.op_name")
            if not str(args.get("provider", "")).endswith("ExecutionProvider"):
                out.append(f"{where}: args.provider is not an ONNX Runtime provider name")
        elif e["cat"] != "Session":
            out.append(f"{where}: cat {e['cat']!r} is none of Session, Node, Kernel")
    # Per thread: sorted by start, each event lies inside or after the ones
    # still open (a stack of ends).
    by_thread = {}
    for e in events:
        if isinstance(e, dict) and isinstance(e.get("ts"), (int, float)):
            by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    for (pid, tid), evs in by_thread.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1][0] - EPS_US:
                stack.pop()
            end = e["ts"] + e["dur"]
            if stack and end > stack[-1][0] + EPS_US:
                out.append(f"thread {tid}: {e['name']} overlaps {stack[-1][1]} "
                           f"without nesting in it")
            stack.append((end, e["name"]))
    return out
