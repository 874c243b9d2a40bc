#!/usr/bin/env python3
"""Nearest Resize and Upsample by integer factors (on AVX-512 each input row
chunk loaded once and repeated by shuffles into every output row that
repeats it) against ONNX Runtime, bit for bit, for this CPU and for
x86-64-v3: 2x, 3x and 4x, the default half_pixel and round_prefer_floor,
asymmetric and floor, pytorch_half_pixel, the width alone, rows that are
not whole vectors, sizes instead of scales, int32 data, a 1-D resize,
opset 9's Upsample, and a 1.5x resize (the index tables, as before).
Then linear Resize by integer factors (each input row chunk loaded once,
its outputs' two taps picked by shuffles; then each output row the
weighted sum of two such rows) at 1e-5: half_pixel, pytorch_half_pixel
and asymmetric, 2x to 8x and unequal factors, the width alone, rows
shorter than a vector, one lane past whole vectors and whole vectors
(whose last chunk's window leaves the row) and 3 rows (the fewest the
shuffled rows take); and where the taps do not repeat (align_corners,
1.5x, a 2-row input, 0.5x down, 2x rows by 1.5x columns), the index
tables' taps gathered per output column and weighed per output row.

  check_upsample.py --kiln K --kiln-run R --work DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortcheck

# name: input shape, scales (or None), sizes (or None), element type,
# coordinate_transformation_mode, nearest_mode, opset
CASES = {
    "x2_asymmetric_floor_1x64x40x40": ((1, 64, 40, 40), (1, 1, 2, 2), None, np.float32,
                                       "asymmetric", "floor", 17),
    "x2_half_pixel_1x16x20x20": ((1, 16, 20, 20), (1, 1, 2, 2), None, np.float32,
                                 "half_pixel", "round_prefer_floor", 17),
    "x3_odd_rows_2x8x7x13": ((2, 8, 7, 13), (1, 1, 3, 3), None, np.float32,
                             "asymmetric", "floor", 17),
    "x4_pytorch_half_pixel_1x4x10x37": ((1, 4, 10, 37), (1, 1, 4, 4), None, np.float32,
                                        "pytorch_half_pixel", "round_prefer_floor", 17),
    "width_only_x2_1x8x5x40": ((1, 8, 5, 40), (1, 1, 1, 2), None, np.float32,
                               "asymmetric", "floor", 17),
    "sizes_x3_1x16x20x20": ((1, 16, 20, 20), None, (1, 16, 60, 60), np.float32,
                            "half_pixel", "round_prefer_floor", 17),
    "int32_x2_1x3x9x33": ((1, 3, 9, 33), (1, 1, 2, 2), None, np.int32,
                          "asymmetric", "floor", 17),
    "rank3_x2_1x8x33": ((1, 8, 33), (1, 1, 2), None, np.float32,
                        "asymmetric", "floor", 17),
    "upsample9_x2_1x32x12x12": ((1, 32, 12, 12), (1, 1, 2, 2), None, np.float32,
                                None, None, 9),
    "x1_5_tables_1x8x10x10": ((1, 8, 10, 10), (1, 1, 1.5, 1.5), None, np.float32,
                              "asymmetric", "floor", 17),
}


# name: input shape, scales, coordinate_transformation_mode
LINEAR_CASES = {
    "linear_x2_half_pixel_1x32x40x40": ((1, 32, 40, 40), (1, 1, 2, 2), "half_pixel"),
    "linear_x4_pytorch_half_pixel_1x5x20x37": ((1, 5, 20, 37), (1, 1, 4, 4),
                                               "pytorch_half_pixel"),
    "linear_x8_half_pixel_1x3x6x9": ((1, 3, 6, 9), (1, 1, 8, 8), "half_pixel"),
    "linear_x2x3_asymmetric_2x4x7x17": ((2, 4, 7, 17), (1, 1, 2, 3), "asymmetric"),
    "linear_width_x2_1x6x5x32": ((1, 6, 5, 32), (1, 1, 1, 2), "half_pixel"),
    "linear_x2_3_rows_1x2x3x16": ((1, 2, 3, 16), (1, 1, 2, 2), "half_pixel"),
    "linear_rank3_x3_4x3x33": ((4, 3, 33), (1, 3, 3), "asymmetric"),
    "linear_align_corners_x2_1x4x9x9": ((1, 4, 9, 9), (1, 1, 2, 2), "align_corners"),
    "linear_align_corners_x4_1x3x10x37": ((1, 3, 10, 37), (1, 1, 4, 4), "align_corners"),
    "linear_x2_2_rows_1x4x2x20": ((1, 4, 2, 20), (1, 1, 2, 2), "half_pixel"),
    "linear_x1_5_half_pixel_1x4x12x20": ((1, 4, 12, 20), (1, 1, 1.5, 1.5), "half_pixel"),
    "linear_x2_by_x1_5_1x3x9x30": ((1, 3, 9, 30), (1, 1, 2, 1.5), "half_pixel"),
    "linear_down_x0_5_1x4x20x40": ((1, 4, 20, 40), (1, 1, 0.5, 0.5), "half_pixel"),
}


def make_linear(path, shape, scales, ctm):
    inits = [numpy_helper.from_array(np.array(scales, np.float32), "scales")]
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode="linear",
                            coordinate_transformation_mode=ctm)
    graph = helper.make_graph([node], "resize",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                             list(shape))],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def make(path, shape, scales, sizes, dtype, ctm, nearest, opset):
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.INT32
    inits = []
    if opset == 9:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode="nearest")
    else:
        inputs = ["X", ""]
        if scales:
            inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
            inputs.append("scales")
        else:
            inputs += ["", "sizes"]
            inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
        node = helper.make_node("Resize", inputs, ["Y"], mode="nearest",
                                coordinate_transformation_mode=ctm, nearest_mode=nearest)
    graph = helper.make_graph([node], "resize",
                              [helper.make_tensor_value_info("X", elem, list(shape))],
                              [helper.make_tensor_value_info("Y", elem, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)
    rng = np.random.default_rng(sum(shape))
    if dtype == np.float32:
        return rng.standard_normal(shape).astype(np.float32)
    return rng.integers(-2**31, 2**31 - 1, size=shape, dtype=np.int64).astype(np.int32)


def main():
    args = ortcheck.parse_args()
    # Bit for bit: nearest resizing copies.
    results = [ortcheck.case(args, name, "X", lambda path, spec=spec: make(path, *spec), tol=0.0)
               for name, spec in CASES.items()]
    results += [ortcheck.case(args, name, "X",
                              lambda path, spec=spec: make_linear(path, *spec), tol=1e-5)
                for name, spec in LINEAR_CASES.items()]
    return ortcheck.summary(results)


if __name__ == "__main__":
    sys.exit(main())
