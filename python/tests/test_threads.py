"""Several Python threads calling run on one session."""
import os
import threading

import numpy as np

import kiln
from conftest import EXPORTED


def test_threads_share_a_session():
    path = os.path.join(EXPORTED, "mobilenet_dw_dynbatch", "model.onnx")
    sess = kiln.InferenceSession(path)
    name = sess.get_inputs()[0].name
    shape = [2] + sess.get_inputs()[0].shape[1:]
    xs = [np.random.default_rng(k).random(shape, dtype=np.float32) for k in range(4)]
    want = [sess.run(None, {name: x})[0] for x in xs]
    errors = []

    def work(k):
        try:
            for _ in range(25):
                got = sess.run(None, {name: xs[k]})[0]
                if not np.array_equal(got, want[k]):
                    errors.append("thread %d: different output" % k)
                    return
        except Exception as e:  # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_threads_bitwise_equal_across_thread_counts():
    path = os.path.join(EXPORTED, "gpt_tiny_dynseq", "model.onnx")
    outs = []
    for n in (1, 2):
        so = kiln.SessionOptions()
        so.intra_op_num_threads = n
        s = kiln.InferenceSession(path, sess_options=so)
        feed = {i.name: np.arange(5, dtype=np.int64).reshape(1, 5) % 7 for i in s.get_inputs()}
        outs.append(s.run(None, feed))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)
