#!/usr/bin/env python3
"""Writes the ONNX backend node tests to disk in the backend-test layout.

onnx >= 1.16 no longer ships the node test corpus as files: the loader
(`onnx.backend.test.loader.load_model_tests(kind="node")`) builds the cases
in memory from the case generators. This script writes them out as

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_N/input_K.pb, output_K.pb   (TensorProto, named
                                                          after the graph I/O)
    OUT/<case>/tolerance.json                            {"rtol": .., "atol": ..}
    OUT/<case>/meta.json                                 non-tensor graph I/O, if any
    OUT/STAMP.json                                       {"onnx": version, "count": N}

Sequence, optional and map values are written the way onnx's own
`backend-test-tools generate-data` writes them (SequenceProto,
OptionalProto, MapProto); such cases are marked in meta.json
("non_tensor_io") because kiln-run reads tensors only.

The corpus is materialized once per installed onnx version: when
OUT/STAMP.json names the installed version and a count that matches the
folder, nothing is rewritten. The count is checked against a floor, so an
empty or truncated corpus fails loudly instead of passing as green.
"""
import argparse
import json
import os
import shutil
import sys
import warnings

# A full corpus has 1884 node tests in onnx 1.23.2. Fewer than this means the
# loader changed or broke: refuse to go on.
MIN_CASES = 1800
STAMP = "STAMP.json"


def _value_kind(type_proto):
    return type_proto.WhichOneof("value")  # tensor_type, sequence_type, ...


def _serialize(value, value_info, numpy_helper, TensorProto, np):
    kind = _value_kind(value_info.type)
    name = value_info.name
    if kind == "map_type":
        return numpy_helper.from_dict(value, name).SerializeToString()
    if kind == "sequence_type":
        return numpy_helper.from_list(value, name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, name).SerializeToString()
    if isinstance(value, TensorProto):
        t = TensorProto()
        t.CopyFrom(value)
        t.name = name
        return t.SerializeToString()
    return numpy_helper.from_array(np.asarray(value), name).SerializeToString()


def write_case(case, case_dir, numpy_helper, TensorProto, np):
    os.makedirs(case_dir)
    model = case.model
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    non_tensor = sorted({_value_kind(vi.type) for vi in
                         list(model.graph.input) + list(model.graph.output)}
                        - {"tensor_type"})
    for i, (inputs, outputs) in enumerate(case.data_sets or []):
        ds = os.path.join(case_dir, f"test_data_set_{i}")
        os.makedirs(ds)
        for prefix, values, infos in (("input", inputs, model.graph.input),
                                      ("output", outputs, model.graph.output)):
            if len(values) > len(infos):
                raise RuntimeError(f"{case.name}: {len(values)} {prefix}s but the "
                                   f"graph declares {len(infos)}")
            for j, value in enumerate(values):
                data = _serialize(value, infos[j], numpy_helper, TensorProto, np)
                with open(os.path.join(ds, f"{prefix}_{j}.pb"), "wb") as f:
                    f.write(data)
    with open(os.path.join(case_dir, "tolerance.json"), "w") as f:
        json.dump({"rtol": case.rtol, "atol": case.atol}, f, sort_keys=True)
        f.write("\n")
    meta = {"data_sets": len(case.data_sets or []), "non_tensor_io": non_tensor}
    with open(os.path.join(case_dir, "meta.json"), "w") as f:
        json.dump(meta, f, sort_keys=True)
        f.write("\n")


def count_cases(out):
    return sum(1 for d in os.listdir(out)
               if os.path.isfile(os.path.join(out, d, "model.onnx")))


def materialize(out, force=False, min_cases=MIN_CASES, quiet=False):
    """Returns (onnx version, number of cases). Raises on a short corpus."""
    import numpy as np
    import onnx
    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.loader import load_model_tests

    stamp_path = os.path.join(out, STAMP)
    if not force and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            stamp = json.load(f)
        if (stamp.get("onnx") == onnx.__version__ and stamp.get("count", 0) >= min_cases
                and count_cases(out) == stamp["count"]):
            if not quiet:
                print(f"materialize: {out} is up to date "
                      f"(onnx {stamp['onnx']}, {stamp['count']} cases)")
            return stamp["onnx"], stamp["count"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators overflow on purpose
        cases = load_model_tests(kind="node")
    if len(cases) < min_cases:
        raise SystemExit(f"materialize: onnx {onnx.__version__} gave only {len(cases)} "
                         f"node tests (floor {min_cases}); refusing an incomplete corpus")
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise SystemExit("materialize: duplicate case names in the corpus")

    tmp = out.rstrip("/") + ".tmp"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    for case in cases:
        if case.model is None:
            raise SystemExit(f"materialize: {case.name} has no model")
        write_case(case, os.path.join(tmp, case.name), numpy_helper, TensorProto, np)
    n = count_cases(tmp)
    if n != len(cases):
        raise SystemExit(f"materialize: wrote {n} cases, expected {len(cases)}")
    with open(os.path.join(tmp, STAMP), "w") as f:
        json.dump({"onnx": onnx.__version__, "count": n}, f, sort_keys=True)
        f.write("\n")
    if os.path.exists(out):
        shutil.rmtree(out)
    os.rename(tmp, out)
    if not quiet:
        print(f"materialize: wrote {n} node tests of onnx {onnx.__version__} to {out}")
    return onnx.__version__, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for the corpus")
    ap.add_argument("--force", action="store_true", help="rewrite even if up to date")
    ap.add_argument("--min-cases", type=int, default=MIN_CASES)
    args = ap.parse_args()
    materialize(args.out, args.force, args.min_cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
