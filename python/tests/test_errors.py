"""Bad input raises with kiln's message, as ONNX Runtime's exceptions."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import kiln
from conftest import save


@pytest.fixture
def sess(gather):
    return kiln.InferenceSession(gather)


def feed(**kw):
    f = {"ids": np.array([0, 3], np.int64), "mask": np.ones((2, 3), bool)}
    f.update(kw)
    return f


def test_runs(sess):
    out = sess.run(["out"], feed())[0]
    np.testing.assert_array_equal(out, [[0, 1, 2], [9, 10, 11]])


def test_wrong_shape(sess):
    with pytest.raises(kiln.InvalidArgument, match="mask"):
        sess.run(None, feed(mask=np.ones((3, 3), bool)))


def test_wrong_dtype(sess):
    with pytest.raises(kiln.InvalidArgument, match=r"Actual: \(tensor\(int32\)\) , expected: "
                       r"\(tensor\(int64\)\)"):
        sess.run(None, feed(ids=np.array([0, 1], np.int32)))


def test_unknown_and_missing_inputs(sess):
    with pytest.raises(kiln.InvalidArgument, match="Invalid input name: idz"):
        sess.run(None, {"idz": np.zeros(2, np.int64), "mask": np.ones((2, 3), bool)})
    with pytest.raises(kiln.InvalidArgument, match=r"Required inputs \(\['mask'\]\) are missing"):
        sess.run(None, {"ids": np.zeros(2, np.int64)})
    with pytest.raises(kiln.InvalidArgument, match="Invalid output name: nope"):
        sess.run(["nope"], feed())


def test_index_out_of_range(sess):
    with pytest.raises(kiln.KilnError, match=r"node \"emb\" \(Gather\): index 7 is outside"):
        sess.run(None, feed(ids=np.array([0, 7], np.int64)))


def test_lists_and_strided_arrays_are_converted(sess):
    strided = np.ones((2, 6), bool)[:, ::2]
    assert not strided.flags.c_contiguous
    out = sess.run(None, {"ids": [1, 2], "mask": strided})[0]
    np.testing.assert_array_equal(out, [[3, 4, 5], [6, 7, 8]])


def test_bad_model_names_the_node(tmp_path):
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="bad_reshape")], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [7])],
        [helper.make_tensor("s", TensorProto.INT64, [1], [7])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with pytest.raises(kiln.InvalidGraph, match="bad_reshape"):
        kiln.InferenceSession(save(m, tmp_path / "bad.onnx"))


def test_missing_file(tmp_path):
    with pytest.raises(kiln.NoSuchFile):
        kiln.InferenceSession(str(tmp_path / "nothing.onnx"))
    with pytest.raises(kiln.NoSuchFile):
        kiln.InferenceSession(str(tmp_path / "libnothing.so"))


def test_unknown_provider_is_skipped_with_a_warning(mlp):
    with pytest.warns(UserWarning, match="no provider 'TensorrtExecutionProvider'"):
        s = kiln.InferenceSession(mlp, providers=["TensorrtExecutionProvider",
                                                  "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]


def test_strings_must_be_text(tmp_path):
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["t"], name="id")], "strings",
        [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("t", TensorProto.STRING, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    s = kiln.InferenceSession(save(m, tmp_path / "s.onnx"))
    out = s.run(None, {"s": np.array(["ab", "c"], dtype=object)})[0]
    assert out.tolist() == ["ab", "c"]
    with pytest.raises(kiln.InvalidArgument, match="str or bytes"):
        s.run(None, {"s": np.array([1, 2], dtype=object)})
    with pytest.raises(kiln.InvalidArgument, match="IOBinding binds numeric tensors"):
        io = s.io_binding()
        io.bind_cpu_input("s", np.array(["a", "b"], dtype=object))
        io.bind_output("t")
        s.run_with_iobinding(io)
