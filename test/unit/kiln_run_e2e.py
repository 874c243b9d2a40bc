#!/usr/bin/env python3
"""End-to-end scenarios for kiln-run against the fake model libraries.

Reference data is written with numpy and onnx.numpy_helper, independently of
kiln's own tensor I/O. Usage: kiln_run_e2e.py --kiln-run BIN --fake LIB
--fakenamed LIB --work DIR SCENARIO
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

A = np.array([[1, -2, 3], [-4, 5, 6]], dtype=np.float32)
B = np.array([[10, 20, 30], [40, 50, 60]], dtype=np.float32) * 0.5
SUM = A + B
COUNT = np.array([int((A > 0).sum())], dtype=np.int64)
# libfakeseq: out = seq + [x], len, first = seq[0], same = maybe.
SEQ = [np.arange(6, dtype=np.float32).reshape(2, 3),
       np.array([1.5, -2], dtype=np.float32)]
MAYBE = A * 2
# libfakedyn: nz = NonZero(x), u = Unique(x) (dynamic-shape), y = 2x.
XD = np.array([[0, 2, 0], [3, 0, 2]], dtype=np.float32)
NZ = np.array([[0, 1, 1], [1, 0, 2]], dtype=np.int64)
U = np.array([0, 2, 3], dtype=np.float32)


class Ctx:
    def __init__(self, args):
        self.bin = args.kiln_run
        self.fake = args.fake
        self.fakenamed = args.fakenamed
        self.fakecuda = args.fakecuda
        self.fakeseq = args.fakeseq
        self.fakedyn = args.fakedyn
        self.fakevar = args.fakevar
        self.work = args.work
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def run(self, *args, lib=None, env=None):
        cmd = [self.bin] + ([lib or self.fake] if lib != "" else []) + list(args)
        full_env = dict(os.environ, **env) if env else None
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                           env=full_env)
        print("$", " ".join(cmd))
        print(p.stdout, end="")
        print(p.stderr, end="", file=sys.stderr)
        return p

    def npy(self, name, array):
        path = self.path(name)
        np.save(path, array)
        return path

    def pb(self, dirname, filename, array, name):
        os.makedirs(self.path(dirname), exist_ok=True)
        tensor = numpy_helper.from_array(array, name)
        with open(self.path(dirname, filename), "wb") as f:
            f.write(tensor.SerializeToString())

    def ref_dir(self, dirname="ref", sum_value=SUM, with_inputs=False):
        self.pb(dirname, "output_0.pb", sum_value, "out/sum:0")
        self.pb(dirname, "output_1.pb", COUNT, "count")
        if with_inputs:
            # Swapped on purpose: matching must go by tensor name.
            self.pb(dirname, "input_0.pb", B, "b")
            self.pb(dirname, "input_1.pb", A, "a")
        return self.path(dirname)

    def proto(self, dirname, filename, message):
        os.makedirs(self.path(dirname), exist_ok=True)
        with open(self.path(dirname, filename), "wb") as f:
            f.write(message.SerializeToString())
        return self.path(dirname, filename)

    def seq_dir(self, dirname, seq=SEQ, maybe=MAYBE, out=None, same="maybe",
                order=(0, 1, 2)):
        """Inputs and references for libfakeseq; `order` places the inputs
        in the files."""
        inputs = [numpy_helper.from_list(seq, "seq"),
                  numpy_helper.from_array(A, "x"),
                  numpy_helper.from_optional(maybe, "maybe")]
        for n, i in enumerate(order):
            self.proto(dirname, f"input_{n}.pb", inputs[i])
        out = seq + [A] if out is None else out
        same = maybe if isinstance(same, str) else same
        self.proto(dirname, "output_0.pb", numpy_helper.from_list(out, "out"))
        self.pb(dirname, "output_1.pb", np.array([len(seq) + 1], np.int64),
                "len")
        self.pb(dirname, "output_2.pb", seq[0], "first")
        self.proto(dirname, "output_3.pb",
                   numpy_helper.from_optional(same, "same"))
        return self.path(dirname)

    def dyn_dir(self, dirname, nz=NZ, u=U, order=(0, 1, 2)):
        """Input and references for libfakedyn: the dynamic-shape outputs
        as plain TensorProtos; `order` places the outputs in the files."""
        self.pb(dirname, "input_0.pb", XD, "x")
        outputs = [(nz, "nz"), (u, "u"), (XD * 2, "y")]
        for n, i in enumerate(order):
            self.pb(dirname, f"output_{n}.pb", *outputs[i])
        return self.path(dirname)

    def npy_inputs(self, a=A, b=B):
        return ["--input", "a=" + self.npy("a.npy", a),
                "--input=b=" + self.npy("b.npy", b)]


def expect_rc(p, rc):
    assert p.returncode == rc, f"exit status {p.returncode}, expected {rc}"


def expect_in(needle, text):
    assert needle in text, f"{needle!r} not found in {text!r}"


def expect_error(p, message):
    expect_rc(p, 2)
    # kiln-run may first say which provider runs the model.
    errors = [l for l in p.stderr.splitlines() if l.startswith("kiln-run: error: ")]
    assert errors, p.stderr
    expect_in(message, p.stderr)


def help_(c):
    p = c.run("--help", lib="")
    expect_rc(p, 0)
    expect_in("usage: kiln-run path/to/libNAME.so", p.stdout)
    expect_error(c.run(lib=""), "no model library given")


def npy_check_ok(c):
    p = c.run(*c.npy_inputs(), "--check-dir", c.ref_dir())
    expect_rc(p, 0)
    expect_in('output "out/sum:0": OK max abs err 0', p.stdout)
    expect_in('output "count": OK', p.stdout)
    # .pb inputs are accepted by --input too.
    c.pb("pbin", "a.pb", A, "")
    p = c.run("--input", "a=" + c.path("pbin", "a.pb"), "--input",
              "b=" + c.npy("b.npy", B), "--check-dir=" + c.path("ref"))
    expect_rc(p, 0)


def inputs_dir_by_name(c):
    p = c.run("--check-dir", c.ref_dir(with_inputs=True))
    expect_rc(p, 0)
    expect_in('output "count": OK', p.stdout)
    # Unnamed protos in an explicit --inputs-dir go by position.
    c.pb("unnamed", "input_0.pb", A, "")
    c.pb("unnamed", "input_1.pb", B, "")
    p = c.run("--inputs-dir", c.path("unnamed"), "--check-dir", c.ref_dir())
    expect_rc(p, 0)
    os.makedirs(c.path("empty"))
    expect_error(c.run("--inputs-dir", c.path("empty")), "no input_0.pb in")
    expect_error(c.run("--check-dir", c.path("nope")), "does not exist")


def output_dir(c):
    out = c.path("out", "nested")
    p = c.run(*c.npy_inputs(), "--output-dir", out)
    expect_rc(p, 0)
    assert sorted(os.listdir(out)) == ["count.npy", "out_sum_0.npy"], os.listdir(out)
    got = np.load(os.path.join(out, "out_sum_0.npy"))
    assert got.dtype == np.float32 and got.shape == (2, 3)
    np.testing.assert_array_equal(got, SUM)
    count = np.load(os.path.join(out, "count.npy"))
    assert count.dtype == np.int64
    np.testing.assert_array_equal(count, COUNT)


def mismatch(c):
    wrong = SUM.copy()
    wrong[1, 2] += 0.25
    wrong[0, 0] += 0.125
    ref = c.ref_dir("wrong", sum_value=wrong)
    p = c.run(*c.npy_inputs(), "--check-dir", ref)
    expect_rc(p, 1)
    expect_in('output "out/sum:0": MISMATCH at [1,2]: got 36 expected 36.25 '
              '(abs err 0.25), 2 elements differ', p.stdout)
    expect_in('output "count": OK', p.stdout)
    # A tolerance that covers the error passes; one just below does not.
    expect_rc(c.run(*c.npy_inputs(), "--check-dir", ref, "--atol", "0.26"), 0)
    expect_rc(c.run(*c.npy_inputs(), "--check-dir", ref, "--atol=0.2",
                    "--rtol=0"), 1)


def wrong_shape(c):
    p = c.run(*c.npy_inputs(a=np.zeros((2, 2), np.float32)))
    expect_error(p, 'input "a": expected shape [2,3], got [2,2]')


def wrong_dtype(c):
    p = c.run(*c.npy_inputs(b=B.astype(np.float64)))
    expect_error(p, 'input "b": expected dtype float32, got float64')
    np.save(c.path("f.npy"), np.asfortranarray(A))
    p = c.run("--input", "a=" + c.path("f.npy"), "--input", "b=" + c.npy("b.npy", B))
    expect_error(p, "Fortran-order")


def missing_input(c):
    p = c.run("--input", "a=" + c.npy("a.npy", A))
    expect_error(p, 'missing input "b"')
    p = c.run("--input", "a=" + c.path("nonexistent.npy"))
    expect_error(p, "cannot open")


def unknown_input(c):
    p = c.run("--input", "c=" + c.npy("a.npy", A))
    expect_error(p, '--input "c": the model has no such input (inputs: "a", "b")')


def random_inputs(c):
    p1 = c.run("--output-dir", c.path("r1"))
    expect_rc(p1, 0)
    expect_in("pseudo-random", p1.stderr)
    expect_rc(c.run("--output-dir", c.path("r2")), 0)
    for name in ("out_sum_0.npy", "count.npy"):
        x, y = np.load(c.path("r1", name)), np.load(c.path("r2", name))
        np.testing.assert_array_equal(x, y)  # deterministic
    s = np.load(c.path("r1", "out_sum_0.npy"))
    assert np.all(np.abs(s) <= 2) and np.any(s != 0), s


def iterations(c):
    p = c.run(*c.npy_inputs(), "--iterations", "5", "--warmup=2")
    expect_rc(p, 0)
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1, lines
    r = json.loads(lines[0])
    assert r["model"] == "fake" and r["iterations"] == 5, r
    assert r["provider"] == "cpu", r
    expect_in("kiln-run: running on cpu", p.stderr)
    assert 0 <= r["min_ms"] <= r["median_ms"] and r["mean_ms"] >= r["min_ms"], r


def profile(c):
    trace = c.path("trace.json")
    p = c.run(*c.npy_inputs(), "--iterations", "3", "--profile", trace)
    expect_rc(p, 0)
    with open(trace) as f:
        events = json.load(f)
    names = [e["name"] for e in events]
    assert names == ["cpu_0", "cpu_1", "model_run"] * 3, names
    for e in events:
        assert e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0, e
        # ONNX Runtime's schema: a hand-built library has no per-node hooks,
        # so runs and partitions only, both "Session" events.
        assert e["cat"] == "Session", e
    assert events[0]["args"] == {"provider": "CPUExecutionProvider"}
    assert events[2]["args"] == {"model_name": "fake"}


def print_(c):
    p = c.run(*c.npy_inputs(), "--print")
    expect_rc(p, 0)
    expect_in('output "out/sum:0": float32 [2,3] = 6 8 18 16 30 36', p.stdout)
    expect_in('output "count": int64 [1] = 4', p.stdout)


def bad_library(c):
    expect_error(c.run(lib=c.path("libnothere.so")), "cannot load model library")
    with open(c.path("libjunk.so"), "w") as f:
        f.write("not an ELF file")
    expect_error(c.run(lib=c.path("libjunk.so")), "cannot load model library")


def no_entry_symbol(c):
    other = c.path("libother.so")
    shutil.copy(c.fakenamed, other)
    expect_error(c.run(lib=other),
                 "defines neither kiln_model nor kiln_model_other")


def fallback_symbol(c):
    p = c.run(*c.npy_inputs(), "--iterations", "1", "--check-dir", c.ref_dir(),
              lib=c.fakenamed)
    expect_rc(p, 0)
    expect_in('"model":"fakenamed"', p.stdout)


def bad_option(c):
    expect_error(c.run("--bogus"), "unknown option '--bogus'")
    expect_error(c.run("--iterations=abc"), "invalid value 'abc' for --iterations")
    expect_error(c.run("--input", "novalue"), "expected NAME=FILE")
    expect_error(c.run("--output-dir"), "needs a value")


def cuda_provider(c):
    # The library references the mgpu* shims undefined: loading it proves
    # kiln-run exports them. Without a GPU it runs its CPU fallback.
    p = c.run(*c.npy_inputs(), "--check-dir", c.ref_dir(), "--iterations", "2",
              "--device-io", lib=c.fakecuda)
    expect_rc(p, 0)
    r = json.loads(p.stdout.strip().splitlines()[0])
    if r["provider"] == "cpu":
        expect_in("kiln-run: running on cpu (CUDA unavailable: ", p.stderr)
        expect_in("--device-io needs CUDA", p.stderr)
    else:
        assert r["provider"] == "cuda", r
        expect_in("kiln-run: running on cuda\n", p.stderr)
    expect_in('output "out/sum:0": OK', p.stdout)


def cuda_force_cpu(c):
    p = c.run(*c.npy_inputs(), "--check-dir", c.ref_dir(), "--cpu",
              "--iterations", "1", lib=c.fakecuda)
    expect_rc(p, 0)
    expect_in("kiln-run: running on cpu (CPU requested)", p.stderr)
    expect_in('"provider":"cpu"', p.stdout)
    # A broken driver path is the same as none.
    p = c.run(*c.npy_inputs(), lib=c.fakecuda,
              env={"KILN_CUDA_DRIVER": "/nonexistent/libcuda.so.1"})
    expect_rc(p, 0)
    expect_in("running on cpu (CUDA unavailable: no CUDA driver: "
              "/nonexistent/libcuda.so.1", p.stderr)


def seq_check_ok(c):
    p = c.run("--check-dir", c.seq_dir("ref"), lib=c.fakeseq)
    expect_rc(p, 0)
    expect_in('output "out": OK max abs err 0 (3 tensors)', p.stdout)
    expect_in('output "len": OK', p.stdout)
    expect_in('output "first": OK', p.stdout)
    expect_in('output "same": OK max abs err 0 (1 tensor)', p.stdout)
    p = c.run("--check-dir", c.seq_dir("none", maybe=None), lib=c.fakeseq)
    expect_rc(p, 0)
    expect_in('output "same": OK (none)', p.stdout)
    # Files in another order are matched by name, each read as its kind.
    p = c.run("--check-dir", c.seq_dir("swapped", order=(1, 2, 0)),
              lib=c.fakeseq)
    expect_rc(p, 0)
    # --input: a .pb per sequence; an optional tensor may be a .npy.
    ref = c.path("ref")
    p = c.run("--input", "seq=" + os.path.join(ref, "input_0.pb"),
              "--input", "x=" + c.npy("x.npy", A),
              "--input", "maybe=" + c.npy("maybe.npy", MAYBE),
              "--output-dir", c.path("o"), lib=c.fakeseq)
    expect_rc(p, 0)


def seq_mismatch(c):
    out = SEQ + [A.copy()]
    out[2][1, 2] += 0.25
    p = c.run("--check-dir", c.seq_dir("wrong", out=out), lib=c.fakeseq)
    expect_rc(p, 1)
    expect_in('output "out": MISMATCH in out[2] at [1,2]: got 6 expected 6.25 '
              '(abs err 0.25)\n', p.stdout)
    expect_in('output "len": OK', p.stdout)
    p = c.run("--check-dir", c.seq_dir("short", out=SEQ, same=None),
              lib=c.fakeseq)
    expect_rc(p, 1)
    expect_in('output "out": ERROR: length 3 differs from expected 2', p.stdout)
    expect_in('output "same": ERROR: got a value, expected none', p.stdout)


def seq_errors(c):
    expect_error(c.run(lib=c.fakeseq),
                 'input "seq" is a sequence of float32: sequence and optional '
                 'inputs need data files')
    # A failed sequence operation fails the run with its message.
    p = c.run("--check-dir", c.seq_dir("reversed", seq=SEQ[::-1]),
              lib=c.fakeseq)
    expect_error(p, 'node "first" (SequenceAt): element 0 has shape [2], the '
                    'compiled model expects [2,3]')
    d = c.seq_dir("tensor")
    c.pb("tensor", "input_0.pb", A, "seq")
    expect_error(c.run("--inputs-dir", d, lib=c.fakeseq),
                 "input_0.pb\" is not a valid ONNX SequenceProto")
    expect_error(c.run("--input", "seq=" + c.npy("s.npy", A), "--input",
                       "x=" + c.npy("x.npy", A), "--input",
                       "maybe=" + c.npy("m.npy", A), lib=c.fakeseq),
                 '--input "seq": a sequence input needs a .pb file holding an '
                 'ONNX SequenceProto')
    d = c.seq_dir("ints")
    c.proto("ints", "input_0.pb",
            numpy_helper.from_list([np.zeros((2, 3), np.int64)], "seq"))
    expect_error(c.run("--inputs-dir", d, lib=c.fakeseq),
                 'input "seq": element 0 is int64, expected float32')


def seq_print(c):
    p = c.run("--inputs-dir", c.seq_dir("in"), "--print", lib=c.fakeseq)
    expect_rc(p, 0)
    expect_in('output "out": sequence of float32, length 3\n'
              'output "out"[0]: float32 [2,3] = 0 1 2 3 4 5\n'
              'output "out"[1]: float32 [2] = 1.5 -2\n'
              'output "out"[2]: float32 [2,3] = 1 -2 3 -4 5 6\n', p.stdout)
    expect_in('output "len": int64 [1] = 3', p.stdout)
    expect_in('output "same": optional tensor of float32, length 1\n'
              'output "same"[0]: float32 [2,3] = 2 -4 6 -8 10 12\n', p.stdout)
    p = c.run("--inputs-dir", c.seq_dir("none", maybe=None), "--print",
              lib=c.fakeseq)
    expect_in('output "same": optional tensor of float32, none\n', p.stdout)


def seq_output_dir(c):
    out = c.path("out")
    p = c.run("--inputs-dir", c.seq_dir("in"), "--output-dir", out,
              lib=c.fakeseq)
    expect_rc(p, 0)
    assert sorted(os.listdir(out)) == ["first.npy", "len.npy", "out.pb",
                                       "same.pb"], os.listdir(out)
    # Readable by ONNX itself.
    s = onnx.SequenceProto()
    with open(os.path.join(out, "out.pb"), "rb") as f:
        s.ParseFromString(f.read())
    assert s.name == "out", s.name
    got = numpy_helper.to_list(s)
    assert len(got) == 3, got
    for g, e in zip(got, SEQ + [A]):
        assert g.dtype == e.dtype and g.shape == e.shape, (g, e)
        np.testing.assert_array_equal(g, e)
    o = onnx.OptionalProto()
    with open(os.path.join(out, "same.pb"), "rb") as f:
        o.ParseFromString(f.read())
    np.testing.assert_array_equal(numpy_helper.to_optional(o), MAYBE)
    p = c.run("--inputs-dir", c.seq_dir("none", maybe=None), "--output-dir",
              out, lib=c.fakeseq)
    expect_rc(p, 0)
    o = onnx.OptionalProto()
    with open(os.path.join(out, "same.pb"), "rb") as f:
        o.ParseFromString(f.read())
    assert numpy_helper.to_optional(o) is None, o


def dyn_check_ok(c):
    p = c.run("--check-dir", c.dyn_dir("ref"), lib=c.fakedyn)
    expect_rc(p, 0)
    expect_in('output "nz": OK max abs err 0\n', p.stdout)
    expect_in('output "u": OK max abs err 0\n', p.stdout)
    expect_in('output "y": OK max abs err 0\n', p.stdout)
    # Files in another order are matched by name.
    p = c.run("--check-dir", c.dyn_dir("swapped", order=(2, 0, 1)),
              lib=c.fakedyn)
    expect_rc(p, 0)
    expect_in('output "nz": OK', p.stdout)
    # Another input, another shape.
    x = np.array([[1, 0, 0], [0, 0, 0]], np.float32)
    p = c.run("--input", "x=" + c.npy("x.npy", x), "--print", lib=c.fakedyn)
    expect_rc(p, 0)
    expect_in('output "nz": int64 [2,1] = 0 0\n', p.stdout)
    expect_in('output "u": float32 [2] = 0 1\n', p.stdout)


def dyn_mismatch(c):
    p = c.run("--check-dir", c.dyn_dir("wrong", nz=NZ[:, :2],
                                       u=np.array([0, 2, 4], np.float32)),
              lib=c.fakedyn)
    expect_rc(p, 1)
    expect_in('output "nz": ERROR: shape [2,3] differs from expected [2,2]\n',
              p.stdout)
    expect_in('output "u": MISMATCH at [2]: got 3 expected 4 (abs err 1)\n',
              p.stdout)
    expect_in('output "y": OK', p.stdout)
    # The dtype must match too.
    p = c.run("--check-dir", c.dyn_dir("dtype", nz=NZ.astype(np.int32)),
              lib=c.fakedyn)
    expect_rc(p, 1)
    expect_in('output "nz": ERROR: dtype int64 differs from expected int32',
              p.stdout)


def dyn_print(c):
    p = c.run("--inputs-dir", c.dyn_dir("in"), "--print", lib=c.fakedyn)
    expect_rc(p, 0)
    expect_in('output "nz": int64 [2,3] = 0 1 1 1 0 2\n'
              'output "u": float32 [3] = 0 2 3\n'
              'output "y": float32 [2,3] = 0 4 0 6 0 4\n', p.stdout)


def dyn_output_dir(c):
    out = c.path("out")
    p = c.run("--inputs-dir", c.dyn_dir("in"), "--output-dir", out,
              lib=c.fakedyn)
    expect_rc(p, 0)
    assert sorted(os.listdir(out)) == ["nz.npy", "u.npy", "y.npy"], \
        os.listdir(out)
    for name, want in (("nz", NZ), ("u", U), ("y", XD * 2)):
        got = np.load(os.path.join(out, name + ".npy"))
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got)
        np.testing.assert_array_equal(got, want)


def dyn_random(c):
    # Random inputs need no data files for dynamic-shape outputs.
    p = c.run("--print", "--iterations", "3", lib=c.fakedyn)
    expect_rc(p, 0)
    expect_in("pseudo-random", p.stderr)
    expect_in('output "nz": int64 [2,', p.stdout)
    expect_in('output "u": float32 [', p.stdout)
    out = c.path("r")
    expect_rc(c.run("--output-dir", out, lib=c.fakedyn), 0)
    y = np.load(os.path.join(out, "y.npy"))
    x = y / 2
    np.testing.assert_array_equal(np.load(os.path.join(out, "nz.npy")),
                                  np.vstack(np.nonzero(x)))
    np.testing.assert_array_equal(np.load(os.path.join(out, "u.npy")),
                                  np.unique(x))


# libfakevar: x float32[n] compiled for n = 2 and 4; y = cumsum(x), n.
def var_dispatch(c):
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    p = c.run("--input", "x=" + c.npy("x.npy", x), "--print", lib=c.fakevar)
    expect_rc(p, 0)
    expect_in("kiln-run: shape variant 1 (of 2 compiled; input shapes: "
              "x [4])", p.stderr)
    expect_in('output "y": float32 [4] = 1 3 6 10', p.stdout)
    expect_in('output "n": int64 [1] = 4', p.stdout)
    p = c.run("--input", "x=" + c.npy("x2.npy", x[:2]), "--print",
              lib=c.fakevar)
    expect_rc(p, 0)
    expect_in("shape variant 0", p.stderr)
    expect_in('output "y": float32 [2] = 1 3', p.stdout)


def var_no_match(c):
    x = np.zeros(3, dtype=np.float32)
    p = c.run("--input", "x=" + c.npy("x.npy", x), lib=c.fakevar)
    expect_error(p, 'input "x" has shape [3]; the model was compiled for [2] '
                 "or [4] (symbolic dimensions: n; kiln compile --dim-values)")


def var_random(c):
    # Random inputs take the first compiled variant's shapes.
    p = c.run("--print", lib=c.fakevar)
    expect_rc(p, 0)
    expect_in("pseudo-random", p.stderr)
    expect_in("shape variant 0", p.stderr)
    expect_in('output "n": int64 [1] = 2', p.stdout)


SCENARIOS = {
    "help": help_, "npy_check_ok": npy_check_ok,
    "inputs_dir_by_name": inputs_dir_by_name, "output_dir": output_dir,
    "mismatch": mismatch, "wrong_shape": wrong_shape,
    "wrong_dtype": wrong_dtype, "missing_input": missing_input,
    "unknown_input": unknown_input, "random_inputs": random_inputs,
    "iterations": iterations, "profile": profile, "print": print_,
    "bad_library": bad_library, "no_entry_symbol": no_entry_symbol,
    "fallback_symbol": fallback_symbol, "bad_option": bad_option,
    "cuda_provider": cuda_provider, "cuda_force_cpu": cuda_force_cpu,
    "seq_check_ok": seq_check_ok, "seq_mismatch": seq_mismatch,
    "seq_errors": seq_errors, "seq_print": seq_print,
    "seq_output_dir": seq_output_dir,
    "dyn_check_ok": dyn_check_ok, "dyn_mismatch": dyn_mismatch,
    "dyn_print": dyn_print, "dyn_output_dir": dyn_output_dir,
    "dyn_random": dyn_random,
    "var_dispatch": var_dispatch, "var_no_match": var_no_match,
    "var_random": var_random,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--fake", required=True)
    ap.add_argument("--fakenamed", required=True)
    ap.add_argument("--fakecuda", required=True)
    ap.add_argument("--fakeseq", required=True)
    ap.add_argument("--fakedyn", required=True)
    ap.add_argument("--fakevar", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    args = ap.parse_args()
    try:
        SCENARIOS[args.scenario](Ctx(args))
    except AssertionError as e:
        print(f"FAIL {args.scenario}: {e}", file=sys.stderr)
        return 1
    print(f"PASS {args.scenario}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
