"""kiln: ONNX models compiled ahead of time, run with ONNX Runtime's API.

    import kiln as ort
    sess = ort.InferenceSession("model.onnx", providers=ort.get_available_providers())
    outputs = sess.run(None, {"input": x})

The first session of a model compiles it into kiln's cache (see
kiln.cache_dir()); later ones load the compiled library.
"""
from . import _kiln
from ._compile import cache_dir, clear_cache, compile_model as compile
from ._errors import EPFail, Fail, InvalidArgument, InvalidGraph, KilnError, NoSuchFile
from ._session import (ExecutionMode, GraphOptimizationLevel, InferenceSession, IOBinding,
                       ModelMetadata, NodeArg, OrtValue, RunOptions, SessionOptions,
                       get_all_providers, get_available_providers, get_device)

__version__ = _kiln.version()

__all__ = [
    "EPFail", "ExecutionMode", "Fail", "GraphOptimizationLevel", "InferenceSession",
    "IOBinding", "InvalidArgument", "InvalidGraph", "KilnError", "ModelMetadata", "NoSuchFile",
    "NodeArg", "OrtValue", "RunOptions", "SessionOptions", "cache_dir", "clear_cache",
    "compile", "get_all_providers", "get_available_providers", "get_device", "get_cmake_dir",
]


def get_cmake_dir():
    """The directory of kiln's CMake package (find_package(kiln)) in an
    installed wheel: pass it as kiln_DIR or put its prefix on CMAKE_PREFIX_PATH."""
    import os
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "cmake", "kiln")
