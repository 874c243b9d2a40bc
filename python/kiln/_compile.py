"""Ahead-of-time compilation from Python: kiln.compile and the compile cache
behind InferenceSession.

The cache lives in $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
~/.cache/kiln: one directory per key, holding libmodel.so and meta.json. The
key hashes the model's bytes, the stat of its external data files, the
compile flags, the kiln version and compiler binary, and this machine's CPU.
Two processes compiling one model at once: the second waits on a lock file
and then loads what the first wrote; entries appear by an atomic rename, so
a reader never sees half of one. Clear it with kiln.clear_cache() or by
removing the directory.
"""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import _errors
from . import _kiln

_PKG = os.path.dirname(os.path.abspath(__file__))


def tool(name):
    """Path of a kiln binary: $KILN_COMPILER for kiln, the package's bin/,
    else PATH."""
    if name == "kiln" and os.environ.get("KILN_COMPILER"):
        return os.environ["KILN_COMPILER"]
    path = os.path.join(_PKG, "bin", name)
    if os.access(path, os.X_OK):
        return path
    found = shutil.which(name)
    # Not the console script that is running (it would exec itself).
    if found and os.path.realpath(found) != os.path.realpath(sys.argv[0] or ""):
        return found
    raise _errors.NoSuchFile("kiln: the %s binary is not installed with the package "
                             "(looked in %s/bin and on PATH)" % (name, _PKG))


def cache_dir():
    if os.environ.get("KILN_CACHE_DIR"):
        return os.environ["KILN_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kiln")


def clear_cache():
    """Removes every compiled model of the cache."""
    shutil.rmtree(cache_dir(), ignore_errors=True)


_CPU = None


def _cpu_id():
    """The CPU the default --target-cpu=native compiles for."""
    global _CPU
    if _CPU is None:
        lines = []
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith(("vendor_id", "model name", "flags", "cpu family", "model\t")):
                        lines.append(line.strip())
                    elif not line.strip() and lines:
                        break
        except OSError:
            pass
        import platform
        lines.append(platform.machine())
        _CPU = "\n".join(lines)
    return _CPU


def _model_bytes(model):
    """(bytes, path or None) of a path, bytes or onnx.ModelProto."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), None
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString(), None
    path = os.fspath(model)
    if not os.path.isfile(path):
        raise _errors.NoSuchFile("kiln: %s: no such model file" % path)
    with open(path, "rb") as f:
        return f.read(), path


def _external_files(data, path):
    """(name, size, mtime) of the external data files the model names."""
    if path is None or b"location" not in data:
        return []
    try:
        import onnx
        from onnx.external_data_helper import _get_all_tensors, uses_external_data
    except ImportError:
        onnx = None
    base = os.path.dirname(os.path.abspath(path))
    names = set()
    if onnx is not None:
        m = onnx.load_model_from_string(data)
        for t in _get_all_tensors(m):
            if uses_external_data(t):
                for e in t.external_data:
                    if e.key == "location":
                        names.add(e.value)
    else:  # without onnx: every sibling file the model's bytes name
        for n in os.listdir(base):
            if n.encode() in data and os.path.join(base, n) != os.path.abspath(path):
                names.add(n)
    out = []
    for n in sorted(names):
        try:
            st = os.stat(os.path.join(base, n))
            out.append((n, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((n, -1, 0))
    return out


def _has_onnx():
    try:
        import onnx  # noqa: F401
        return True
    except ImportError:
        return False


def _metadata(data):
    """What get_modelmeta and NodeArg need from the ONNX model (needs onnx)."""
    try:
        import onnx
    except ImportError:
        return {}
    m = onnx.load_model_from_string(data)
    dims = {}
    for v in list(m.graph.input) + list(m.graph.output):
        if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape"):
            dims[v.name] = [d.dim_param if d.HasField("dim_param") else
                            (d.dim_value if d.HasField("dim_value") else None)
                            for d in v.type.tensor_type.shape.dim]
    return {
        "producer_name": m.producer_name,
        "graph_name": m.graph.name,
        "domain": m.domain,
        "description": m.doc_string,
        "graph_description": m.graph.doc_string,
        "version": m.model_version,
        "custom_metadata_map": {p.key: p.value for p in m.metadata_props},
        "dims": dims,
    }


def _run_compiler(data, model_path, out_prefix, flags):
    """kiln compile of the model at model_path, or of its bytes (written to
    a temporary file) when it has no path."""
    if model_path is None:
        with tempfile.TemporaryDirectory() as tmp:
            model_path = os.path.join(tmp, "model.onnx")
            with open(model_path, "wb") as f:
                f.write(data)
            _compile_file(model_path, out_prefix, flags)
    else:
        _compile_file(model_path, out_prefix, flags)


def _compile_file(model_path, out_prefix, flags):
    cmd = [tool("kiln"), "compile", model_path, "-o", out_prefix, "-q"] + list(flags)
    if os.environ.get("KILN_VERBOSE"):
        cmd.remove("-q")
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if os.environ.get("KILN_VERBOSE"):
        print(r.stderr, end="", file=sys.stderr)
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        raise _errors.InvalidGraph("\n".join(lines[-20:]) or
                                   "kiln compile failed with status %d" % r.returncode)


def compile_flags(providers=None, options=None):
    """kiln compile's flags for kiln.compile's keyword options: name=value
    becomes --name=value (underscores as dashes), True a bare flag,
    input_shapes={"x": [1, 3, 224, 224]} --input-shape=x=1,3,224,224,
    opt_level=N -ON, and a list repeats the flag."""
    flags = []
    if providers:
        flags.append("--providers=" + ",".join(providers))
    for k, v in (options or {}).items():
        if v is None or v is False:
            continue
        if k == "opt_level":
            flags.append("-O%d" % int(v))
        elif k == "input_shapes":
            for name, shape in v.items():
                flags.append("--input-shape=%s=%s" % (name, ",".join(
                    "?" if d is None else str(d) for d in shape)))
        elif k == "extra_args":
            flags.extend(v)
        else:
            flag = "--" + k.replace("_", "-")
            if v is True:
                flags.append(flag)
            elif isinstance(v, (list, tuple)):
                flags.extend("%s=%s" % (flag, x) for x in v)
            elif isinstance(v, dict):
                flags.extend("%s=%s=%s" % (flag, a, b if not isinstance(b, (list, tuple))
                                           else ",".join(map(str, b))) for a, b in v.items())
            else:
                flags.append("%s=%s" % (flag, v))
    return flags


def compile_model(model, output, providers=None, **options):
    """Compiles an ONNX model (a path, bytes or an onnx.ModelProto) to
    OUTPUT.o, libOUTPUT-name.a/.so and OUTPUT.h, as `kiln compile -o
    output`; returns their paths. Options: see compile_flags."""
    from ._session import _kiln_providers
    data, path = _model_bytes(model)
    flags = compile_flags(_kiln_providers(providers) if providers else None, options)
    out_dir = os.path.dirname(os.path.abspath(output))
    os.makedirs(out_dir, exist_ok=True)
    _run_compiler(data, path, output, flags)
    base = os.path.basename(output)
    # The model's C name (compiler/Pipeline.cpp, modelNameFor) names the
    # header and libraries; the object keeps the prefix as given.
    name = re.sub("[^A-Za-z0-9]", "_", base)
    if not name or name[0].isdigit():
        name = "m_" + name
    result = {"object": os.path.join(out_dir, base + ".o"),
              "header": os.path.join(out_dir, name + ".h"),
              "static": os.path.join(out_dir, "lib%s.a" % name),
              "shared": os.path.join(out_dir, "lib%s.so" % name)}
    missing = [p for p in result.values() if not os.path.exists(p)]
    if missing:
        raise _errors.Fail("kiln compile did not write %s" % ", ".join(missing))
    return result


def cached_library(model, flags):
    """(path of the compiled library, metadata dict) for the model, compiled
    now unless the cache has it."""
    data, path = _model_bytes(model)
    compiler = tool("kiln")
    st = os.stat(compiler)
    h = hashlib.sha256()
    for part in ("kiln-cache 1", _kiln.version(), "onnx" if _has_onnx() else "", "%s %d %d" % (os.path.realpath(compiler),
                 st.st_size, st.st_mtime_ns), _cpu_id(), "\0".join(flags),
                 repr(_external_files(data, path))):
        h.update(part.encode())
        h.update(b"\0")
    h.update(data)
    key = h.hexdigest()[:32]
    root = cache_dir()
    entry = os.path.join(root, key)
    lib = os.path.join(entry, "libmodel.so")
    if not os.path.exists(lib):
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, key + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(lib):
                tmp = tempfile.mkdtemp(prefix=key + ".tmp", dir=root)
                try:
                    _run_compiler(data, path, os.path.join(tmp, "model"), flags)
                    with open(os.path.join(tmp, "meta.json"), "w") as f:
                        json.dump(_metadata(data), f)
                    for n in os.listdir(tmp):  # keep the library and metadata
                        if n not in ("libmodel.so", "meta.json"):
                            os.remove(os.path.join(tmp, n))
                    os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide it from others
                    if os.path.isdir(entry):  # left without its library
                        shutil.rmtree(entry, ignore_errors=True)
                    try:
                        os.rename(tmp, entry)
                    except OSError:
                        if not os.path.exists(lib):  # not a concurrent writer's
                            raise
                        shutil.rmtree(tmp, ignore_errors=True)
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
    meta = {}
    try:
        with open(os.path.join(entry, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    return lib, meta
