#!/usr/bin/env python3
"""Export the zoo: third-party-style float models (classifiers, detectors,
OCR, segmentation, speech, language) that probe kiln for performance
cliffs; bench/run.py times them beside ONNX Runtime and OpenVINO
(scripts/bench.sh --zoo writes docs/performance-zoo.md).

  python3 bench/export_zoo.py OUTDIR [--set 1|2|3|all] [--force] [--dry-run] [name ...]

runs two steps, each under an interpreter that has what it needs (the
script re-runs itself under the other one when it lacks a step's modules):

  /usr/bin/python3 bench/export_zoo.py --step torch OUTDIR [name ...]
      builds each model in plain torch.nn (no torchvision), writes
      NAME/model.onnx and stashes the test input and torch's output as .npy
      (needs torch 1.13 and numpy: Debian's python3-torch)
  python3 bench/export_zoo.py --step data OUTDIR [name ...]
      writes NAME/test_data_set_0/{input_0,output_0}.pb from them and checks
      ONNX Runtime against output_0.pb (needs numpy, onnx and onnxruntime)

Interpreters: --torch-python (default $KILN_TORCH_PYTHON or /usr/bin/python3)
and --onnx-python (default $KILN_ONNX_PYTHON or python3). A model whose
output_0.pb exists is skipped unless --force; no names means all of --set
(default all); --dry-run prints the names left to export and stops.

Every model: float32, batch 1, static shapes, opset 17, IR 8, input "input",
output "output". Weights: torch.manual_seed(0) before each model, default
init (set 2's deep conv nets and SqueezeNet: He init, as under default init
their output would hardly depend on the input), then random BatchNorm
statistics and BatchNorm and LayerNorm affine parameters; the last layer
before the output activation is rescaled to an output std of about 2 on the
test input (logits, softmax, sigmoid and tanh stay spread out, so the check
means something). Test input: np.random.default_rng(0).standard_normal(shape);
output_0.pb is torch's.

Set 1 (bench/zoo_models.py), the models that showed the first cliffs:

  mobilenet_v3_small  1x3x224x224 -> 1x1000       torchvision's layout (SE, Hardswish)
  shufflenet_v2_x1_0  1x3x224x224 -> 1x1000       torchvision's layout: chunk and channel
                                                  shuffle from x.size() (Shape-derived
                                                  Slice and Reshape)
  ocr_det             1x3x320x320 -> 1x1x320x320  DBNet-like text detector: depthwise
                                                  backbone, FPN, ConvTranspose head
  crnn_rec            1x3x48x320  -> 80x1x97      CRNN text recognizer: convs, 2-layer
                                                  bidirectional LSTM, softmax
  unet_seg            1x3x256x256 -> 1x4x256x256  UNet (16 to 256 channels), ConvTranspose
                                                  up-sampling, softmax over classes
  effnet_b0_lite      1x3x224x224 -> 1x1000       EfficientNet-B0's stages (SiLU, SE)
  yolo_lite           1x3x320x320 -> 1x6300x85    YOLOv5n's layout (C3, SPPF, PAN neck),
                                                  no box decoding
  vit_tiny            1x3x224x224 -> 1x1000       ViT-Tiny's width (192, 3 heads), 4 layers
  conformer_lite      1x200x80    -> 1x49x500     conv subsampling, 2 conformer-style
                                                  blocks (feed-forward and conv module),
                                                  an LSTM, log-softmax
  vocoder_lite        1x80x50     -> 1x1x12800    HiFi-GAN-like vocoder: ConvTranspose1d
                                                  x8 x8 x4, dilated residual convs, tanh

Set 2 (bench/zoo_models_2.py):

  kws_crnn            1x1x49x40   -> 1x12         keyword spotter: 2 convs (stride 2 over
                                                  mel), a GRU (64) over the 49 frames,
                                                  the last step's softmax
  lstm_lm             1x32x128    -> 1x32x1000    LSTM language model past its embedding
                                                  (float input): 2-layer LSTM (256),
                                                  logits at every step
  resnet50_lite       1x3x224x224 -> 1x1000       ResNet-50's bottlenecks (v1.5), stages
                                                  [2,2,2,2] at width 64
  doc_orient_lcnet    1x3x224x224 -> 1x4          PP-LCNet x0.5 document-orientation
                                                  classifier: 3x3 and 5x5 depthwise,
                                                  Hardswish, SE, 1x1 conv head, softmax
  densenet_lite       1x3x128x128 -> 1x100        torchvision's DenseNet layout: 3 blocks of
                                                  4 layers (growth 32, a Concat per layer),
                                                  avg-pool transitions (a zero Pad first)
  squeezenet          1x3x224x224 -> 1x1000       torchvision's SqueezeNet 1.1 and its init:
                                                  Fire modules, ceil-mode MaxPool
  ssdlite_det         1x3x300x300 -> 1x1833x25    SSDLite on MobileNetV2 (ReLU6 as Clip):
                                                  heads at 19x19, 10x10 and 5x5 (depthwise
                                                  + 1x1), NHWC Transpose and Reshape per
                                                  head; per anchor 4 box regressions and
                                                  the softmax over 21 classes
  whisper_enc_lite    1x80x300    -> 1x150x384    Whisper-tiny's audio encoder (width 384,
                                                  6 heads), 2 pre-LN layers: Conv1d, erf
                                                  GELU, sinusoids; its attention's scale
                                                  from q.shape (a Pow of constants) and
                                                  flatten (Shape-derived Reshape)

Set 3 (bench/zoo_models_3.py):

  deeplab_lite        1x3x320x320 -> 1x21x320x320 DeepLabV3+-style segmenter: dilated
                                                  bottlenecks, ASPP (rates 6, 12, 18,
                                                  image pooling), decoder, bilinear
                                                  (half_pixel) 2x and 4x upsampling
  inception_lite      1x3x299x299 -> 1x1000       Inception-v3's stem and four mixed
                                                  blocks: four concatenated branches,
                                                  a zero Pad before each average pool
  convnext_lite       1x3x224x224 -> 1x1000       ConvNeXt's blocks (widths 48 to 384):
                                                  7x7 depthwise, LayerNorm and a GELU
                                                  MLP on NHWC, layer scale
  swin_lite           1x3x224x224 -> 1x1000       Swin-T's first stage, 4 blocks: 7x7
                                                  windows by Reshape and Transpose,
                                                  shifted by Roll every other block
"""
import argparse
import importlib.util
import os
import subprocess
import sys

# The model definitions, beside this script (sys.path[0] when run as one).
import zoo_models
import zoo_models_2
import zoo_models_3

HERE = os.path.abspath(__file__)
OPSET = 17
RTOL, ATOL = 1e-3, 1e-4

# The model sets by --set name: each module has the tables below and
# models(), the constructors by name.
SETS = {"1": zoo_models, "2": zoo_models_2, "3": zoo_models_3}

# The test input's shape of each model, in export order; the layers
# rescaled to an output std of 2 (the last before each model's output
# activation); the std instead of 2 where the output activation saturates
# (and the bias shifted to a zero-mean pre-activation); torch's thread count
# (output_0.pb was made at it; at others torch's outputs can differ in the
# last bits).
SHAPES, CALIB_LAYERS, CENTER, TORCH_THREADS = {}, {}, {}, {}
for _m in SETS.values():
    SHAPES.update(_m.SHAPES)
    CALIB_LAYERS.update(_m.CALIB_LAYERS)
    CENTER.update(_m.CENTER)
    TORCH_THREADS.update(_m.TORCH_THREADS)
del _m


def have(*mods):
    return all(importlib.util.find_spec(m) is not None for m in mods)


# --------------------------------------------------------------------------- torch step

def randomize_norms(model):
    """BatchNorm: weight in [0.5, 1.5), bias and mean ~ N(0, 0.1), variance in
    [0.5, 1.5); LayerNorm: weight and bias the same way."""
    import torch
    import torch.nn as nn
    from torch.nn.modules.batchnorm import _BatchNorm
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, _BatchNorm):
                n = m.num_features
                m.weight.copy_(torch.rand(n) * 1.0 + 0.5)
                m.bias.copy_(torch.randn(n) * 0.1)
                m.running_mean.copy_(torch.randn(n) * 0.1)
                m.running_var.copy_(torch.rand(n) * 1.0 + 0.5)
            elif isinstance(m, nn.LayerNorm) and m.elementwise_affine:
                n = m.weight.numel()
                m.weight.copy_(torch.rand(n).view_as(m.weight) * 1.0 + 0.5)
                m.bias.copy_(torch.randn(n).view_as(m.bias) * 0.1)


def calibrate(model, name, x):
    """Rescales CALIB_LAYERS[name], one after the other, on input x."""
    import torch
    mods = dict(model.named_modules())
    target = CENTER.get(name, 2.0)
    for lname in CALIB_LAYERS[name]:
        layer = mods[lname]
        got = {}
        h = layer.register_forward_hook(lambda m, i, o: got.__setitem__("o", o))
        with torch.no_grad():
            model(x)
            h.remove()
            scale = target / float(got["o"].std())
            layer.weight.mul_(scale)
            if layer.bias is not None:
                layer.bias.mul_(scale)
                if name in CENTER:
                    layer.bias.sub_(float(got["o"].mean()) * scale)


def step_torch(outdir, names):
    """Writes NAME/model.onnx and stashes NAME/_input.npy and _output.npy."""
    import warnings
    import numpy as np
    import torch
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    print(f"torch {torch.__version__}")
    ctors = {}
    for m in SETS.values():
        ctors.update(m.models())
    for name in names:
        torch.set_num_threads(TORCH_THREADS[name])
        torch.manual_seed(0)
        model = ctors[name]()
        randomize_norms(model)
        model.eval()
        x = np.random.default_rng(0).standard_normal(SHAPES[name], dtype=np.float32)
        calibrate(model, name, torch.from_numpy(x))
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        with torch.no_grad():
            y = model(torch.from_numpy(x)).numpy().astype(np.float32)
            torch.onnx.export(model, (torch.from_numpy(x),), os.path.join(d, "model.onnx"),
                              opset_version=OPSET, input_names=["input"],
                              output_names=["output"], do_constant_folding=True,
                              training=torch.onnx.TrainingMode.EVAL)
        np.save(os.path.join(d, "_input.npy"), x)
        np.save(os.path.join(d, "_output.npy"), y)
        print(f"{name}: {x.shape} -> {y.shape}, output mean {y.mean():.4g} std {y.std():.4g}",
              flush=True)


# --------------------------------------------------------------------------- data step

def step_data(outdir, names):
    """Turns each stash of the torch step into test_data_set_0 and checks
    ONNX Runtime against it; returns the names that failed the check."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    failed = []
    for name in names:
        d = os.path.join(outdir, name)
        stash = [os.path.join(d, f) for f in ("_input.npy", "_output.npy")]
        if not all(os.path.exists(p) for p in stash):
            print(f"{name}: no {stash[0]} (run --step torch first)")
            failed.append(name)
            continue
        path = os.path.join(d, "model.onnx")
        model = onnx.load(path)
        if model.ir_version != 8:  # torch 1.13 writes 8; keep the zoo at 8 regardless
            model.ir_version = 8
            onnx.save(model, path)
        onnx.checker.check_model(model, full_check=True)
        x, y = (np.load(p) for p in stash)
        tdir = os.path.join(d, "test_data_set_0")
        os.makedirs(tdir, exist_ok=True)
        for f, value, vi in [("input_0.pb", x, model.graph.input[0]),
                             ("output_0.pb", y, model.graph.output[0])]:
            with open(os.path.join(tdir, f), "wb") as out:
                out.write(numpy_helper.from_array(value, vi.name).SerializeToString())
        for p in stash:
            os.remove(p)

        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        got = sess.run(None, {model.graph.input[0].name: x})[0]
        ok = got.shape == y.shape and np.allclose(got, y, rtol=RTOL, atol=ATOL)
        diff = float(np.abs(got - y).max()) if got.shape == y.shape else float("nan")
        print(f"{name}: {len(model.graph.node)} nodes, ONNX Runtime max |diff| {diff:.3g}: "
              f"{'ok' if ok else 'FAIL'} (rtol {RTOL}, atol {ATOL})", flush=True)
        if not ok:
            failed.append(name)
    return failed


# --------------------------------------------------------------------------- driver

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*", metavar="name", help="default: all of --set")
    ap.add_argument("--set", choices=["all"] + list(SETS), default="all", dest="zoo_set",
                    help="the model set: 1 (the first ten), 2 (the next eight) or all")
    ap.add_argument("--force", action="store_true",
                    help="re-export models whose output_0.pb exists")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the models left to export, one a line, and stop")
    ap.add_argument("--step", choices=["all", "torch", "data"], default="all")
    ap.add_argument("--torch-python",
                    default=os.environ.get("KILN_TORCH_PYTHON", "/usr/bin/python3"))
    ap.add_argument("--onnx-python", default=os.environ.get("KILN_ONNX_PYTHON", "python3"))
    args = ap.parse_intermixed_args()
    zoo = SHAPES if args.zoo_set == "all" else SETS[args.zoo_set].SHAPES
    unknown = [n for n in args.names if n not in zoo]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; set {args.zoo_set}: {', '.join(zoo)}")
    outdir = os.path.abspath(args.outdir)

    names = args.names or list(zoo)
    if not args.force:
        done = [n for n in names
                if os.path.exists(os.path.join(outdir, n, "test_data_set_0", "output_0.pb"))]
        if done and not args.dry_run:
            print(f"up to date (--force re-exports): {', '.join(done)}")
        names = [n for n in names if n not in done]
    if args.dry_run:
        for n in names:
            print(n)
        return
    if not names:
        return
    os.makedirs(outdir, exist_ok=True)

    def delegate(python, step):
        # Only the names left to do; --force so that the child skips none.
        cmd = [python, HERE, "--step", step, "--force", outdir] + names
        print("+ " + " ".join(cmd), flush=True)
        rc = subprocess.run(cmd).returncode
        if rc:
            sys.exit(rc)

    if args.step in ("all", "torch"):
        if have("torch", "numpy"):
            step_torch(outdir, names)
        elif args.step == "all":
            delegate(args.torch_python, "torch")
        else:
            sys.exit("--step torch needs torch and numpy")
    if args.step in ("all", "data"):
        if have("numpy", "onnx", "onnxruntime"):
            failed = step_data(outdir, names)
            if failed:
                sys.exit(f"failed: {', '.join(failed)}")
        elif args.step == "all":
            delegate(args.onnx_python, "data")
        else:
            sys.exit("--step data needs numpy, onnx and onnxruntime")


if __name__ == "__main__":
    main()
