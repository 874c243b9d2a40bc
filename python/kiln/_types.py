"""Element types: kiln's codes (ONNX TensorProto.DataType numbers), numpy
dtypes and ONNX Runtime's type strings."""
import numpy as np

try:  # bfloat16, float8 and int4 arrays, as onnx and onnxruntime use them
    import ml_dtypes
except ImportError:  # pragma: no cover - without it those types travel raw
    ml_dtypes = None

STRING = 8

# code: (ONNX Runtime's name, numpy's)
_TABLE = {1: ("float", "float32"), 2: ("uint8", "uint8"), 3: ("int8", "int8"),
          4: ("uint16", "uint16"), 5: ("int16", "int16"), 6: ("int32", "int32"),
          7: ("int64", "int64"), 8: ("string", "object"), 9: ("bool", "bool"),
          10: ("float16", "float16"), 11: ("double", "float64"), 12: ("uint32", "uint32"),
          13: ("uint64", "uint64")}
# code: (ONNX Runtime's name, ml_dtypes', the raw dtype its bytes travel as
# when the buffer protocol cannot describe it)
_ML = {
    16: ("bfloat16", "bfloat16", np.uint16),
    17: ("float8e4m3fn", "float8_e4m3fn", np.uint8),
    18: ("float8e4m3fnuz", "float8_e4m3fnuz", np.uint8),
    19: ("float8e5m2", "float8_e5m2", np.uint8),
    20: ("float8e5m2fnuz", "float8_e5m2fnuz", np.uint8),
    21: ("uint4", "uint4", np.uint8),
    22: ("int4", "int4", np.uint8),
    23: ("float4e2m1", "float4_e2m1fn", np.uint8),
    24: ("float8e8m0", "float8_e8m0fnu", np.uint8),
    25: ("uint2", "uint2", np.uint8),
    26: ("int2", "int2", np.uint8),
}

# code -> numpy dtype of the arrays users see; RAW: code -> the dtype its
# bytes travel as when the buffer protocol cannot describe it.
NUMPY = {code: np.dtype(t) for code, (_, t) in _TABLE.items()}
NAMES = {code: name for code, (name, _) in _TABLE.items()}
# FROM_NUMPY: numpy dtype -> code; a raw stand-in never maps back (uint8
# stays uint8 without ml_dtypes).
FROM_NUMPY = {dt: code for code, dt in NUMPY.items()}
RAW = {}
for _code, (_name, _ml, _raw) in _ML.items():
    NAMES[_code] = _name
    _t = getattr(ml_dtypes, _ml, None) if ml_dtypes else None
    NUMPY[_code] = np.dtype(_t) if _t is not None else np.dtype(_raw)
    RAW[_code] = np.dtype(_raw)
    if _t is not None:
        FROM_NUMPY[np.dtype(_t)] = _code


def type_string(code, kind=0):
    """ONNX Runtime's NodeArg.type: 'tensor(float)', 'seq(tensor(int64))'."""
    t = "tensor(%s)" % NAMES.get(code, "undefined")
    if kind == 1:
        return "seq(%s)" % t
    if kind == 2:
        return "optional(%s)" % t
    if kind == 3:
        return "optional(seq(%s))" % t
    return t


def numpy_type_string(dtype):
    code = FROM_NUMPY.get(np.dtype(dtype))
    return type_string(code) if code else "tensor(%s)" % np.dtype(dtype).name
