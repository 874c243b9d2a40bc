#!/usr/bin/env python3
"""Export benchmark models with symbolic (dim_param) dimensions.

Regenerate everything (from the repo root; either interpreter works, each
step re-runs itself under the interpreter that has what it needs):

  python3 bench/export_dynamic_models.py [OUTDIR]

which amounts to these four commands:

  /tmp/hfvenv/bin/python bench/export_dynamic_models.py --step torch [OUTDIR]
      bert_dyn, gpt2_dyn, mobilenet_v2, lstm_dyn and crnn_gru (needs torch 1.13 and
      transformers==4.30.2)
  python3 bench/export_dynamic_models.py --step resnet [OUTDIR]
      resnet18_dyn from ../shared/models/resnet18/model.onnx (needs onnx)
  python3 bench/export_dynamic_models.py --step data [OUTDIR]
      each model's test_data_set_0 (needs numpy, onnx and onnxruntime)
  python3 bench/check_dynamic_models.py [OUTDIR]
      runs each model in ONNX Runtime at several shapes (needs onnxruntime)

OUTDIR defaults to build/bench_models under the repo root. Interpreters:
--torch-python (default $KILN_TORCH_PYTHON or /tmp/hfvenv/bin/python) and
--onnx-python (default $KILN_ONNX_PYTHON or python3). No network access:
the Hugging Face models are built from configs with random weights
(torch.manual_seed(0)), never from_pretrained. The torch venv:
  /usr/bin/python3 -m venv --system-site-packages /tmp/hfvenv
      (apt python3-torch python3-yaml python3-requests)
  /tmp/hfvenv/bin/pip install --no-deps -r bench/hf-requirements.lock
      (transformers==4.30.2 and everything it pulls in, pinned)

Writes (each model with test_data_set_0/{input,output}_N.pb for bench/run.py:
seeded random inputs at the shape below, outputs from ONNX Runtime):
  OUTDIR/bert_dyn/model.onnx      BertModel (shape of google/bert_uncased_L-2_H-128_A-2)
      in:  input_ids, attention_mask  int64 [batch, sequence]
      out: last_hidden_state          float [batch, sequence, 128]
      data: batch 1, sequence 128, mask all ones
  OUTDIR/gpt2_dyn/model.onnx      GPT2LMHeadModel (n_embd 128, 2 layers, 2 heads), one
                                  decoder step with the KV cache (as test/models/hf/export_hf.py)
      in:  input_ids [batch, seq], attention_mask [batch, total_seq],
           past_key_values.{0,1}.{key,value} [batch, 2, past_seq, 64]
      out: logits [batch, seq, 50257], present.{0,1}.{key,value} [batch, 2, total_seq, 64]
      data: batch 1, past_seq 128, seq 1
  OUTDIR/resnet18_dyn/model.onnx  resnet18 with input [N, 3, H, W], output [N, 1000]
      data: 1x3x224x224
  OUTDIR/mobilenet_v2/model.onnx  MobileNetV2 (torchvision's architecture, width 1.0,
                                  random weights and BatchNorm statistics)
      in:  input  float [N, 3, 224, 224]
      out: output float [N, 1000]
      data: 1x3x224x224
  OUTDIR/lstm_dyn/model.onnx      a speech encoder's recurrent part: 2-layer LSTM
                                  (80 features, hidden 256) and a Linear(256, 32)
      in:  features float [N, T, 80]; out: logits float [N, T, 32]
      data: 1x100x80 (one second of 10 ms frames)
  OUTDIR/crnn_gru/model.onnx      a streaming conv + GRU model: Conv1d(40, 64, 3) + ReLU,
                                  2-layer GRU (hidden 128), Linear(128, 12)
      in:  features float [N, T, 40]; out: logits float [N, T-2, 12]
      data: 1x50x40
"""
import argparse
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.abspath(__file__)
OPSET = 14
RESNET_SRC = os.path.join(ROOT, "..", "shared", "models", "resnet18", "model.onnx")


def have(*mods):
    return all(importlib.util.find_spec(m) is not None for m in mods)


# --------------------------------------------------------------------------- torch step

def export_bert(outdir):
    import torch
    from transformers import BertConfig, BertModel

    class LastHidden(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                             return_dict=True)
            return out.last_hidden_state

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=128, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=512,
                        max_position_embeddings=512)
    wrapper = LastHidden(BertModel(config).eval()).eval()

    batch, seq = 2, 16
    input_ids = torch.randint(0, config.vocab_size, (batch, seq), dtype=torch.int64)
    attention_mask = torch.ones(batch, seq, dtype=torch.int64)
    attention_mask[1, 12:] = 0

    names_in = ["input_ids", "attention_mask"]
    names_out = ["last_hidden_state"]
    dyn = {n: {0: "batch", 1: "sequence"} for n in names_in + names_out}
    d = os.path.join(outdir, "bert_dyn")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapper, (input_ids, attention_mask), path,
                          input_names=names_in, output_names=names_out,
                          dynamic_axes=dyn, opset_version=OPSET,
                          do_constant_folding=True)
    print(f"wrote {path}")


def export_gpt2(outdir):
    sys.path.insert(0, os.path.join(ROOT, "test", "models", "hf"))
    from export_hf import export_gpt2_step
    from transformers import GPT2Config

    config = GPT2Config(vocab_size=50257, n_embd=128, n_layer=2, n_head=2,
                        n_positions=1024, use_cache=True)
    d = os.path.join(outdir, "gpt2_dyn")
    export_gpt2_step(config, d)
    print(f"wrote {os.path.join(d, 'model.onnx')}")


def mobilenet_v2():
    """torchvision.models.mobilenet_v2() (width 1.0, 1000 classes) without torchvision."""
    from torch import nn

    def cbr(inp, out, k=1, stride=1, groups=1, act=True):
        layers = [nn.Conv2d(inp, out, k, stride, (k - 1) // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(out)]
        return layers + [nn.ReLU6(inplace=True)] if act else layers

    class InvertedResidual(nn.Module):
        def __init__(self, inp, out, stride, t):
            super().__init__()
            hidden = inp * t
            self.res = stride == 1 and inp == out
            self.conv = nn.Sequential(*(cbr(inp, hidden) if t != 1 else []),
                                      *cbr(hidden, hidden, 3, stride, hidden),
                                      *cbr(hidden, out, act=False))

        def forward(self, x):
            return x + self.conv(x) if self.res else self.conv(x)

    layers, inp = cbr(3, 32, 3, 2), 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            layers.append(InvertedResidual(inp, c, s if i == 0 else 1, t))
            inp = c
    layers += cbr(inp, 1280)
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(1),
                          nn.Dropout(0.2), nn.Linear(1280, 1000))
    for m in model.modules():  # torchvision's init, then BatchNorm that is not identity
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.normal_(m.bias, 0, 0.1)
            nn.init.normal_(m.running_mean, 0, 0.1)
            nn.init.uniform_(m.running_var, 0.5, 1.5)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)
    return model


def export_mobilenet(outdir):
    import torch

    torch.manual_seed(0)
    model = mobilenet_v2().eval()
    d = os.path.join(outdir, "mobilenet_v2")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, torch.randn(1, 3, 224, 224), path,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
                          opset_version=OPSET, do_constant_folding=True)
    print(f"wrote {path}")


def export_recurrent(outdir):
    """lstm_dyn and crnn_gru: batch and time of run-time size."""
    import torch
    from torch import nn

    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(80, 256, num_layers=2, batch_first=True)
            self.fc = nn.Linear(256, 32)

        def forward(self, x):
            return self.fc(self.rnn(x)[0])

    class CrnnGru(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(40, 64, 3)
            self.rnn = nn.GRU(64, 128, num_layers=2, batch_first=True)
            self.fc = nn.Linear(128, 12)

        def forward(self, x):
            h = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
            return self.fc(self.rnn(h)[0])

    for name, model, shape in [("lstm_dyn", Lstm(), (1, 100, 80)),
                               ("crnn_gru", CrnnGru(), (1, 50, 40))]:
        torch.manual_seed(0)
        model = model.eval()
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        with torch.no_grad():
            torch.onnx.export(model, torch.randn(*shape), path,
                              input_names=["features"], output_names=["logits"],
                              dynamic_axes={"features": {0: "N", 1: "T"},
                                            "logits": {0: "N", 1: "T"}},
                              opset_version=OPSET, do_constant_folding=True)
        print(f"wrote {path}")


def step_torch(outdir):
    import torch
    import transformers
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    export_bert(outdir)
    export_gpt2(outdir)
    export_mobilenet(outdir)
    export_recurrent(outdir)


# --------------------------------------------------------------------------- resnet step

def set_dims(value_info, params):
    """params: {axis: dim_param}; the other dims keep their values."""
    dims = value_info.type.tensor_type.shape.dim
    for axis, name in params.items():
        dims[axis].Clear()
        dims[axis].dim_param = name


def step_resnet(outdir, src):
    import onnx

    if not os.path.exists(src):
        print(f"resnet18_dyn: skipped, {src} not found")
        return
    m = onnx.load(src)
    g = m.graph
    inits = {i.name for i in g.initializer}
    inputs = [i for i in g.input if i.name not in inits]
    assert len(inputs) == 1 and len(g.output) == 1, "expected one input and one output"
    set_dims(inputs[0], {0: "N", 2: "H", 3: "W"})
    set_dims(g.output[0], {0: "N"})
    # Intermediate shapes were fixed for 1x3x224x224; let them be re-inferred.
    del g.value_info[:]

    # A Reshape to a constant shape with a hard-coded batch would break other
    # batches; make it copy the batch (0 with allowzero=0) instead. Flatten
    # (any axis) and the rest of the graph need no change.
    consts = {i.name: i for i in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    consts[n.output[0]] = a.t
    edits = []
    for n in g.node:
        if n.op_type != "Reshape" or n.input[1] not in consts:
            continue
        shape = onnx.numpy_helper.to_array(consts[n.input[1]])
        allowzero = any(a.name == "allowzero" and a.i for a in n.attribute)
        if shape.ndim == 1 and len(shape) >= 2 and shape[0] == 1 and not allowzero:
            new = shape.copy()
            new[0] = 0
            name = n.input[1] + "_batch0"
            g.initializer.append(onnx.numpy_helper.from_array(new, name))
            n.input[1] = name
            edits.append(f"{n.name}: shape {shape.tolist()} -> {new.tolist()}")
    for e in edits:
        print(f"resnet18_dyn: edited Reshape {e}")
    if not edits:
        print("resnet18_dyn: no Reshape with a hard-coded batch (the graph uses "
              "Flatten axis=1); only the input/output dims changed")

    # Check that the shapes infer with the symbolic dims, but save without
    # value_info: consumers re-infer (the inferred H/W would be unk__N dims).
    onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    onnx.checker.check_model(m)
    d = os.path.join(outdir, "resnet18_dyn")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    print(f"wrote {path}")


# --------------------------------------------------------------------------- data step

def data_feeds(name, rng):
    """test_data_set_0's inputs by name, or None for a model without data."""
    import numpy as np

    if name == "bert_dyn":
        return {"input_ids": rng.integers(0, 30522, (1, 128), dtype=np.int64),
                "attention_mask": np.ones((1, 128), dtype=np.int64)}
    if name == "gpt2_dyn":
        feeds = {"input_ids": rng.integers(0, 50257, (1, 1), dtype=np.int64),
                 "attention_mask": np.ones((1, 129), dtype=np.int64)}
        for i in range(2):
            for kv in ("key", "value"):
                feeds[f"past_key_values.{i}.{kv}"] = rng.standard_normal(
                    (1, 2, 128, 64)).astype(np.float32)
        return feeds
    if name in ("resnet18_dyn", "mobilenet_v2"):
        return {"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}
    if name == "lstm_dyn":
        return {"features": rng.standard_normal((1, 100, 80)).astype(np.float32)}
    if name == "crnn_gru":
        return {"features": rng.standard_normal((1, 50, 40)).astype(np.float32)}
    return None


def step_data(outdir):
    """Writes NAME/test_data_set_0/{input,output}_N.pb (inputs in graph order,
    as bench/run.py reads them; outputs from ONNX Runtime)."""
    import numpy as np
    import onnxruntime as ort
    from onnx import numpy_helper

    def write(path, value, name):
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())

    for name in ["bert_dyn", "gpt2_dyn", "resnet18_dyn", "mobilenet_v2", "lstm_dyn",
                 "crnn_gru"]:
        model = os.path.join(outdir, name, "model.onnx")
        if not os.path.exists(model):
            print(f"{name}: no test data, {model} not found")
            continue
        feeds = data_feeds(name, np.random.default_rng(0))
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        d = os.path.join(outdir, name, "test_data_set_0")
        os.makedirs(d, exist_ok=True)
        for i, inp in enumerate(sess.get_inputs()):
            write(os.path.join(d, f"input_{i}.pb"), feeds[inp.name], inp.name)
        for i, (out, value) in enumerate(zip(sess.get_outputs(), sess.run(None, feeds))):
            write(os.path.join(d, f"output_{i}.pb"), value, out.name)
        print(f"wrote {d}")


# --------------------------------------------------------------------------- driver

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", nargs="?", default=os.path.join(ROOT, "build", "bench_models"))
    ap.add_argument("--step", choices=["all", "torch", "resnet", "data", "check"], default="all")
    ap.add_argument("--torch-python",
                    default=os.environ.get("KILN_TORCH_PYTHON", "/tmp/hfvenv/bin/python"))
    ap.add_argument("--onnx-python", default=os.environ.get("KILN_ONNX_PYTHON", "python3"))
    ap.add_argument("--resnet-src", default=RESNET_SRC)
    ap.add_argument("--no-check", action="store_true", help="skip the ONNX Runtime check")
    args = ap.parse_args()
    outdir = os.path.abspath(args.outdir)
    os.makedirs(outdir, exist_ok=True)

    def delegate(python, step):
        cmd = [python, HERE, "--step", step, "--resnet-src", args.resnet_src, outdir]
        print("+ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)

    if args.step in ("all", "torch"):
        if have("torch", "transformers"):
            step_torch(outdir)
        elif args.step == "all":
            delegate(args.torch_python, "torch")
        else:
            sys.exit("--step torch needs torch and transformers")
    if args.step in ("all", "resnet"):
        if have("onnx"):
            step_resnet(outdir, args.resnet_src)
        elif args.step == "all":
            delegate(args.onnx_python, "resnet")
        else:
            sys.exit("--step resnet needs onnx")
    if args.step in ("all", "data"):
        if have("numpy", "onnx", "onnxruntime"):
            step_data(outdir)
        elif args.step == "all":
            delegate(args.onnx_python, "data")
        else:
            sys.exit("--step data needs numpy, onnx and onnxruntime")
    if args.step == "check" or (args.step == "all" and not args.no_check):
        check = os.path.join(os.path.dirname(HERE), "check_dynamic_models.py")
        python = sys.executable if have("onnx", "onnxruntime") else args.onnx_python
        cmd = [python, check, outdir]
        print("+ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
