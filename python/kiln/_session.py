"""ONNX Runtime's Python surface over kiln: InferenceSession, SessionOptions,
NodeArg, IOBinding."""
import datetime
import enum
import os
import re
import warnings

import numpy as np

from . import _compile
from . import _errors
from . import _kiln
from . import _types

# ONNX Runtime's provider names and kiln's.
_ORT_NAMES = {"cuda": "CUDAExecutionProvider", "cpu": "CPUExecutionProvider"}
_KILN_NAMES = {v: k for k, v in _ORT_NAMES.items()}


def _provider_table():
    return [(name, bool(ok), reason) for name, ok, reason, _ in _kiln.providers()]


def get_all_providers():
    """Every provider kiln knows, in priority order (ONNX Runtime's names)."""
    order = sorted(_provider_table(), key=lambda p: p[0] != "cuda")
    return [_ORT_NAMES.get(n, n) for n, _, _ in order]


def get_available_providers():
    """The providers this machine can run, in priority order:
    ["CUDAExecutionProvider", "CPUExecutionProvider"] with a CUDA device,
    else ["CPUExecutionProvider"]."""
    order = sorted(_provider_table(), key=lambda p: p[0] != "cuda")
    return [_ORT_NAMES.get(n, n) for n, ok, _ in order if ok]


def get_device():
    return "GPU" if "CUDAExecutionProvider" in get_available_providers() else "CPU"


def _kiln_providers(providers):
    """kiln's names, in order, for ONNX Runtime's or kiln's names (a name or
    a (name, options) pair each). As ONNX Runtime, a provider kiln does not
    have is skipped with a warning; so are provider options."""
    out = []
    for p in providers:
        name = p[0] if isinstance(p, (tuple, list)) else p
        k = _KILN_NAMES.get(name, name.lower() if isinstance(name, str) else name)
        if k not in _ORT_NAMES:
            warnings.warn("kiln has no provider %r (it has %s): skipped"
                          % (name, ", ".join(get_all_providers())), stacklevel=3)
            continue
        opts = dict(p[1]) if isinstance(p, (tuple, list)) and len(p) > 1 and p[1] else {}
        if {k: v for k, v in opts.items() if (k, str(v)) != ("device_id", "0")}:
            warnings.warn("kiln ignores the options %s of %s (it runs on device 0)"
                          % (sorted(opts), name), stacklevel=3)
        if k not in out:
            out.append(k)
    return out


class GraphOptimizationLevel(enum.IntEnum):
    """Mapped to kiln compile's -O: DISABLE_ALL -O0, BASIC -O1, the rest -O2."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class _Fields:
    """Options as plain attributes with defaults (_DEFAULTS); a misspelled
    one is an AttributeError, as on ONNX Runtime's objects."""
    __slots__ = ()
    _DEFAULTS = {}

    def __init__(self):
        for k, v in self._DEFAULTS.items():
            setattr(self, k, v)


class SessionOptions(_Fields):
    """ONNX Runtime's SessionOptions: the fields kiln uses, and the others
    ONNX Runtime code commonly sets (accepted, without effect)."""
    _DEFAULTS = {
        "intra_op_num_threads": 0,  # 0: KILN_NUM_THREADS, else the physical cores
        "inter_op_num_threads": 0,
        "execution_mode": ExecutionMode.ORT_SEQUENTIAL,
        "graph_optimization_level": GraphOptimizationLevel.ORT_ENABLE_ALL,
        "enable_profiling": False,
        "profile_file_prefix": "kiln_profile",
        "log_severity_level": 2,
        "log_verbosity_level": 0,
        "logid": "",
        "optimized_model_filepath": "",
        "enable_cpu_mem_arena": True,
        "enable_mem_pattern": True,
        "enable_mem_reuse": True,
        "use_deterministic_compute": False,  # kiln always is
    }
    __slots__ = tuple(_DEFAULTS) + ("_config",)

    def __init__(self):
        super().__init__()
        self._config = {}

    def add_session_config_entry(self, key, value):
        """kiln reads "kiln.compile_flags": extra `kiln compile` flags,
        space-separated (e.g. "--input-shape=x=1,3,224,224")."""
        self._config[key] = str(value)

    def get_session_config_entry(self, key):
        return self._config[key]


class RunOptions(_Fields):
    _DEFAULTS = {"log_severity_level": 2, "log_verbosity_level": 0, "logid": "",
                 "run_tag": "", "terminate": False, "only_execute_path_to_fetches": False}
    __slots__ = tuple(_DEFAULTS)


class NodeArg:
    """An input or output: name, shape (ints; a symbolic dimension as its
    name, None when it has none) and type ("tensor(float)", ...)."""
    __slots__ = ("name", "shape", "type")

    def __init__(self, name, shape, type):
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


class ModelMetadata:
    __slots__ = ("producer_name", "graph_name", "domain", "description",
                 "graph_description", "version", "custom_metadata_map")

    def __init__(self, meta, lib):
        self.producer_name = meta.get("producer_name", "")
        self.graph_name = meta.get("graph_name", lib.name)
        self.domain = meta.get("domain", "")
        self.description = meta.get("description", "")
        self.graph_description = meta.get("graph_description", "")
        self.version = meta.get("version", 0)
        self.custom_metadata_map = dict(meta.get("custom_metadata_map", {}))


_LOADED = {}


def _fresh_path(path):
    """dlopen returns the library already loaded from a path even when the
    file has been rewritten since (a recompile to the same -o): then load a
    copy under a new name instead."""
    st = os.stat(path)
    stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    seen = _LOADED.setdefault(path, stamp)
    if seen == stamp:
        return path
    import shutil
    import tempfile
    fd, copy = tempfile.mkstemp(prefix="kiln-", suffix=".so")
    os.close(fd)
    shutil.copyfile(path, copy)
    return copy


def _call(fn, *args):
    try:
        return fn(*args)
    except _kiln.Error as e:
        raise _errors.from_native(e) from None


class InferenceSession:
    """Runs an ONNX model (a .onnx path, its bytes, or an onnx.ModelProto),
    compiled ahead of time into kiln's cache on first use, or a library
    `kiln compile` made (lib*.so)."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None,
                 provider_options=None, **kwargs):
        options = sess_options or SessionOptions()
        self._options = options
        self._model_path = path_or_bytes if isinstance(path_or_bytes, (str, os.PathLike)) else None
        available = [_KILN_NAMES[p] for p in get_available_providers()]
        wanted = _kiln_providers(providers) if providers else list(available)
        # As ONNX Runtime: a provider this machine lacks is skipped (it
        # warns), and the CPU is always the fallback.
        use = [p for p in wanted if p in available or p == "cpu"]
        if "cpu" not in use:
            use.append("cpu")
        self._requested = use
        if self._model_path is not None and str(self._model_path).endswith(".so"):
            lib_path, meta = os.path.abspath(self._model_path), {}
            if not os.path.exists(lib_path):
                raise _errors.NoSuchFile("kiln: %s: no such model library" % lib_path)
        else:
            level = int(options.graph_optimization_level)
            flags = ["--providers=" + ",".join(use),
                     "-O%d" % (0 if level == 0 else 1 if level == 1 else 2)]
            flags += options._config.get("kiln.compile_flags", "").split()
            lib_path, meta = _compile.cached_library(path_or_bytes, flags)
        self._lib = _call(_kiln.Library, _fresh_path(lib_path))
        self._meta = meta
        self._sess = _call(_kiln.Session, self._lib, int(options.intra_op_num_threads),
                           "cuda" not in use)
        dims = meta.get("dims", {})

        # kiln names an unnamed symbolic dimension "<input>:<axis>"; ONNX
        # Runtime shows it as None.
        unnamed = re.compile("(%s):[0-9]+" % "|".join(
            re.escape(n) for n, _, _, _ in self._lib.inputs)) if self._lib.inputs else None

        def args(values):
            out = []
            for name, code, shape, kind in values:
                if shape is not None and unnamed is not None:
                    shape = [None if isinstance(d, str) and unnamed.fullmatch(d) else d
                             for d in shape]
                onnx_dims = dims.get(name)
                if shape is not None and onnx_dims and len(onnx_dims) == len(shape):
                    # The model's own dim_param where kiln compiled a symbol.
                    shape = [d if isinstance(d, int) or not isinstance(o, str) else o
                             for d, o in zip(shape, onnx_dims)]
                out.append(NodeArg(name, shape, _types.type_string(code, kind)))
            return out

        self._inputs = args(self._lib.inputs)
        self._outputs = args(self._lib.outputs)
        # Per input: (index, kind, code, numpy dtype, raw dtype or None).
        self._in_index = {}
        for i, (name, code, _, kind) in enumerate(self._lib.inputs):
            self._in_index[name] = (i, kind, code, _types.NUMPY.get(code),
                                    _types.RAW.get(code))
        self._out_index = {name: i for i, (name, _, _, _) in enumerate(self._lib.outputs)}
        # Outputs of one shape for every run, made here as numpy arrays:
        # (shape, dtype) or None.
        self._static_out = [
            (tuple(shape), _types.NUMPY[code]) if kind == 0 and shape is not None and
            all(isinstance(d, int) for d in shape) and code in _types.NUMPY and
            code != _types.STRING and code not in _types.RAW else None
            for _, code, shape, kind in self._lib.outputs]
        self._profiling = False
        if options.enable_profiling:
            _call(self._sess.enable_profiling)
            self._profiling = True

    # --- what the model is -------------------------------------------------
    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_modelmeta(self):
        return ModelMetadata(self._meta, self._lib)

    def get_providers(self):
        """What runs the model: ["CUDAExecutionProvider",
        "CPUExecutionProvider"] on a CUDA session, else the CPU's."""
        if self._sess.provider == "cuda":
            return ["CUDAExecutionProvider", "CPUExecutionProvider"]
        return ["CPUExecutionProvider"]

    def get_provider_options(self):
        return {p: {} for p in self.get_providers()}

    def get_session_options(self):
        return self._options

    @property
    def library_path(self):
        """The compiled model library this session runs."""
        return self._lib.path

    # --- running -------------------------------------------------------------
    def _tensor(self, name, value, code, dtype, raw):
        if isinstance(value, OrtValue):
            value = value.numpy()
        if code == _types.STRING:
            a = np.asarray(value, dtype=object)
            items = []
            for x in a.ravel():
                if isinstance(x, str):
                    x = x.encode()
                if not isinstance(x, bytes) or b"\0" in x:
                    raise _errors.InvalidArgument(
                        "input %r: a string tensor holds str or bytes without NUL, not %r"
                        % (name, x))
                items.append(x)
            return (items, code, a.shape)
        if type(value) is not np.ndarray:
            value = np.asarray(value, dtype=dtype)
        elif value.dtype != dtype:
            raise _errors.InvalidArgument(
                "Unexpected input data type. Actual: (%s) , expected: (%s) for input %r" %
                (_types.numpy_type_string(value.dtype), _types.type_string(code), name))
        if not value.flags.c_contiguous:
            value = np.ascontiguousarray(value)
        if raw is not None:
            value = value.view(raw)
        return (value, code, value.shape)

    def _specs(self, input_feed):
        specs = [None] * len(self._in_index)
        for name, value in input_feed.items():
            info = self._in_index.get(name)
            if info is None:
                raise _errors.InvalidArgument("Invalid input name: %s" % name)
            i, kind, code, dtype, raw = info
            if kind == 0:
                specs[i] = self._tensor(name, value, code, dtype, raw)
            elif value is None:
                specs[i] = None
            elif kind == 2:  # optional tensor: one element
                specs[i] = [self._tensor(name, value, code, dtype, raw)]
            else:
                specs[i] = [self._tensor(name, v, code, dtype, raw) for v in value]
        if len(input_feed) != len(specs):
            missing = [n for n in self._in_index if n not in input_feed]
            raise _errors.InvalidArgument("Required inputs (%s) are missing from input feed (%s)."
                                          % (missing, list(input_feed)))
        return specs

    def _output(self, i, value):
        code = self._lib.outputs[i][1]
        if isinstance(value, tuple):  # strings: (shape, list of bytes)
            shape, items = value
            return np.array([b.decode("utf-8", "replace") for b in items],
                            dtype=object).reshape(shape)
        if isinstance(value, list):
            return [self._output(i, v) for v in value]
        if value is not None and code in _types.RAW and value.dtype != _types.NUMPY[code]:
            return value.view(_types.NUMPY[code])
        return value

    def run(self, output_names, input_feed, run_options=None):
        """Outputs named (None: all), as numpy arrays, for the inputs in
        input_feed ({name: array}); a sequence output is a list of arrays,
        a none optional None."""
        preset = [np.empty(*o) if o else None for o in self._static_out]
        outs = _call(self._sess.run, self._specs(input_feed), preset)
        if output_names:
            try:
                idx = [self._out_index[n] for n in output_names]
            except KeyError as e:
                raise _errors.InvalidArgument("Invalid output name: %s" % e.args[0]) from None
        else:
            idx = range(len(outs))
        return [self._output(i, outs[i]) for i in idx]

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        feed = {k: v.numpy() for k, v in input_dict_ort_values.items()}
        return [OrtValue.ortvalue_from_numpy(a) for a in self.run(output_names, feed, run_options)]

    # --- profiling -----------------------------------------------------------
    def end_profiling(self):
        """Writes the Chrome trace of the runs so far (ONNX Runtime's
        format) to <profile_file_prefix>_<date>.json; returns its path."""
        if not self._profiling:
            return ""
        stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
        path = "%s_%s.json" % (self._options.profile_file_prefix, stamp)
        _call(self._sess.end_profiling, path)
        self._profiling = False
        return path

    # --- device-resident inputs and outputs ------------------------------------
    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs on the bound values; sequence, optional and string values
        cannot be bound (use run)."""
        iobinding._run()


class OrtValue:
    """A tensor in host or CUDA memory, as ONNX Runtime's OrtValue."""

    def __init__(self, array=None, device_type="cpu", shape=None, code=None, ptr=None,
                 owned=False):
        self._array, self._device = array, device_type
        self._shape = tuple(array.shape) if array is not None else tuple(shape)
        self._code = _types.FROM_NUMPY[array.dtype] if array is not None else code
        self._ptr, self._owned = ptr, owned

    @staticmethod
    def ortvalue_from_numpy(array, device_type="cpu", device_id=0):
        a = np.ascontiguousarray(array)
        if device_type == "cpu":
            return OrtValue(a)
        ptr = _call(_kiln.device_alloc, a.nbytes)
        _call(_kiln.device_copy, ptr, a.ctypes.data, a.nbytes)
        return OrtValue(None, "cuda", a.shape, _types.FROM_NUMPY[a.dtype], ptr, True)

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0):
        dtype = np.dtype(element_type)
        if device_type == "cpu":
            return OrtValue(np.empty(shape, dtype))
        ptr = _call(_kiln.device_alloc, int(np.prod(shape)) * dtype.itemsize)
        return OrtValue(None, "cuda", tuple(shape), _types.FROM_NUMPY[dtype], ptr, True)

    def __del__(self):
        if getattr(self, "_owned", False) and self._ptr:
            try:
                _kiln.device_free(self._ptr)
            except Exception:
                pass

    def device_name(self):
        return self._device

    def is_tensor(self):
        return True

    def shape(self):
        return list(self._shape)

    def data_type(self):
        return _types.type_string(self._code)

    def element_type(self):
        return _types.NUMPY[self._code].type

    def data_ptr(self):
        return self._array.ctypes.data if self._array is not None else self._ptr

    def _nbytes(self):
        return int(np.prod(self._shape, dtype=np.int64)) * _types.NUMPY[self._code].itemsize

    def numpy(self):
        if self._array is not None:
            return self._array
        out = np.empty(self._shape, _types.NUMPY[self._code])
        _call(_kiln.device_copy, out.ctypes.data, self._ptr, out.nbytes)
        return out


class IOBinding:
    """ONNX Runtime's IOBinding. On a CUDA session of a model with device
    I/O (kiln compile --providers=cuda,cpu), inputs and outputs bound in
    CUDA memory are read and written there (host-bound ones are copied
    over); on a CPU session, bound numpy outputs are written in place."""

    def __init__(self, session):
        self._s = session
        self._inputs = {}
        self._outputs = {}
        self._results = None

    def _value_of(self, name, table, what):
        if name not in table:
            raise _errors.InvalidArgument("Invalid %s name: %s" % (what, name))
        values = self._s._lib.inputs if what == "input" else self._s._lib.outputs
        _, code, _, kind = next(v for v in values if v[0] == name)
        if kind != 0 or code == _types.STRING:
            raise _errors.InvalidArgument(
                "%s '%s' is not a numeric tensor: IOBinding binds numeric tensors only "
                "(use run())" % (what, name))
        return table[name]

    def bind_cpu_input(self, name, arr_on_cpu):
        i, _, code, dtype, raw = self._value_of(name, self._s._in_index, "input")
        a = self._s._tensor(name, arr_on_cpu, code, dtype, raw)[0]
        self._inputs[name] = OrtValue(a.view(dtype) if raw is not None else a)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        self._value_of(name, self._s._in_index, "input")
        dtype = np.dtype(element_type)
        code = _types.FROM_NUMPY[dtype]
        if device_type == "cpu":
            n = int(np.prod(shape, dtype=np.int64))
            a = np.ctypeslib.as_array((np.ctypeslib.as_ctypes_type(dtype) * n).from_address(
                buffer_ptr)).reshape(shape) if n else np.empty(shape, dtype)
            self._inputs[name] = OrtValue(a)
        else:
            self._inputs[name] = OrtValue(None, device_type, tuple(shape), code, buffer_ptr)

    def bind_ortvalue_input(self, name, ortvalue):
        self._value_of(name, self._s._in_index, "input")
        self._inputs[name] = ortvalue

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None,
                    shape=None, buffer_ptr=None):
        self._value_of(name, self._s._out_index, "output")
        if buffer_ptr is None:
            self._outputs[name] = device_type  # allocated by the run
            return
        dtype = np.dtype(element_type)
        if device_type == "cpu":
            n = int(np.prod(shape, dtype=np.int64))
            a = np.ctypeslib.as_array((np.ctypeslib.as_ctypes_type(dtype) * n).from_address(
                buffer_ptr)).reshape(shape)
            self._outputs[name] = OrtValue(a)
        else:
            self._outputs[name] = OrtValue(None, device_type, tuple(shape),
                                           _types.FROM_NUMPY[dtype], buffer_ptr)

    def bind_ortvalue_output(self, name, ortvalue):
        self._value_of(name, self._s._out_index, "output")
        self._outputs[name] = ortvalue

    def clear_binding_inputs(self):
        self._inputs.clear()

    def clear_binding_outputs(self):
        self._outputs.clear()

    def synchronize_inputs(self):
        pass

    def synchronize_outputs(self):
        pass

    def _run(self):
        s = self._s
        lib = s._lib
        names = [n for n, _, _, _ in lib.inputs]
        missing = [n for n in names if n not in self._inputs]
        if missing:
            raise _errors.InvalidArgument("Required inputs (%s) are not bound." % missing)
        ins = [self._inputs[n] for n in names]
        on_device = s._sess.provider == "cuda"
        devices = [v._device for v in ins] + [
            v if isinstance(v, str) else v._device for v in self._outputs.values()]
        if not on_device and any(d != "cpu" for d in devices):
            raise _errors.InvalidArgument(
                "a value is bound in CUDA memory but the session runs on the CPU")
        temps = []
        if on_device:
            if not s._sess.has_device_io:
                raise _errors.InvalidArgument(
                    "the model has no device I/O variant: recompile it with this kiln")
            ins = [v if v._device != "cpu" else OrtValue.ortvalue_from_numpy(v.numpy(), "cuda")
                   for v in ins]
            temps += ins
        in_specs = [(v.data_ptr(), v._code, v._shape, v._nbytes()) for v in ins]
        shapes = _call(s._sess.output_shapes, in_specs)
        outs, copy_back = [], []
        for (name, code, _, _), shape in zip(lib.outputs, shapes):
            b = self._outputs.get(name, "cuda" if on_device else "cpu")
            if isinstance(b, str):
                dtype = _types.NUMPY[code]
                b = (OrtValue(np.empty(shape, dtype)) if b == "cpu" and not on_device else
                     OrtValue.ortvalue_from_shape_and_type(shape, dtype, "cuda"))
                if self._outputs.get(name) == "cpu" and on_device:
                    copy_back.append((len(outs), name))
            elif b._device == "cpu" and on_device:
                copy_back.append((len(outs), name))
                host = b
                b = OrtValue.ortvalue_from_shape_and_type(b._shape, _types.NUMPY[b._code],
                                                          "cuda")
                b._host = host
            outs.append(b)
        out_specs = [(v.data_ptr(), v._code, v._shape, v._nbytes()) for v in outs]
        _call(s._sess.run_bound, in_specs, out_specs, on_device)
        for k, name in copy_back:
            host = getattr(outs[k], "_host", None)
            arr = outs[k].numpy()
            if host is not None:
                host._array[...] = arr
                outs[k] = host
            else:
                outs[k] = OrtValue(arr)
        # As ONNX Runtime: the bound outputs, in the order they were bound.
        index = {n: i for i, (n, _, _, _) in enumerate(lib.outputs)}
        self._results = [outs[index[n]] for n in self._outputs]

    def get_outputs(self):
        return list(self._results or [])

    def copy_outputs_to_cpu(self):
        return [v.numpy() for v in self._results or []]
