"""Exceptions, named as ONNX Runtime's (onnxruntime.capi.onnxruntime_pybind11_state)."""


class KilnError(RuntimeError):
    """Every error kiln raises; the message is kiln's own."""


class Fail(KilnError):
    pass


class InvalidArgument(KilnError, ValueError):
    """Wrong input name, shape or dtype; a missing input."""


class NoSuchFile(KilnError, FileNotFoundError):
    pass


class InvalidGraph(KilnError):
    """The compiler refused the model: its message names the node."""


class EPFail(KilnError):
    """The execution provider failed (a CUDA error)."""


# kiln_status codes (kiln_rt.h) -> exception
_BY_STATUS = {1: InvalidArgument, 2: InvalidArgument, 3: InvalidArgument, 6: EPFail}


def from_native(err):
    """kiln._kiln.Error(status, message) as the matching exception."""
    code, message = err.args if len(err.args) == 2 else (7, str(err))
    return _BY_STATUS.get(code, Fail)(message)
