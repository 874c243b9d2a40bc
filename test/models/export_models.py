#!/usr/bin/python3
"""Exports the extra end-to-end models with PyTorch (Debian's python3-torch,
run by /usr/bin/python3) at opset 17 with seeded random weights:

  mobilenet_dw  a MobileNet-style CNN (depthwise-separable blocks, ReLU6,
                BatchNorm, global pooling)
  gpt_tiny      a GPT-style causal decoder (token + position embeddings,
                causal self-attention, GELU MLP, LayerNorm)
  lstm_tiny     a 2-layer LSTM over a sequence, then a linear head
  llama_tiny    a LLaMA-style decoder block pair: RMSNorm, rotary embeddings
                on the heads (attention on Q/K/V split already), causal
                additive mask, SiLU-gated MLP

and each of them again as NAME_dynbatch, whose batch dimension is symbolic
("batch"), as exporters write models for serving; and

  transformer_enc_dynbatch  nn.TransformerEncoder (2 layers, 4 heads), whose
                MultiheadAttention works sequence-first: the batch is
                interleaved by reshapes ([S, B*H, D], [S*B, E])

and, with a symbolic sequence length too ("batch", "seq": compiled with
kiln compile --dim-values seq=...):

  gpt_tiny_dynseq           gpt_tiny (its causal mask and positions are
                sliced to the sequence length at run time)
  transformer_enc_dynseq    the encoder above, batch first

and two spellings other exporters' models use:

  gpt2_conv1d   GPT-2 blocks whose linear layers are Hugging Face's Conv1D
                (addmm on the flattened rows, then a view back), a boolean
                causal mask in Where, GELU in its tanh form
  effnet_silu   EfficientNet-style MBConv blocks: SiLU after every Conv,
                squeeze-excitation with SiLU and Sigmoid

  /usr/bin/python3 test/models/export_models.py OUT_DIR
"""
import os
import sys

import torch
from torch import nn

torch.manual_seed(0)


class DwBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.pw = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = torch.clamp(self.bn1(self.dw(x)), 0, 6)
        return torch.clamp(self.bn2(self.pw(x)), 0, 6)


class MobileNetDw(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 2, 1)
        self.blocks = nn.Sequential(DwBlock(16, 32, 1), DwBlock(32, 64, 2), DwBlock(64, 64, 1))
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        x = torch.clamp(self.stem(x), 0, 6)
        x = self.blocks(x)
        x = x.mean(dim=(2, 3))
        return self.head(x)


class Block(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, h, d // h).transpose(1, 2)
        k = k.view(b, t, h, d // h).transpose(1, 2)
        v = v.view(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (d // h) ** 0.5)
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


class GptTiny(nn.Module):
    def __init__(self, vocab=100, d=64, heads=4, seq=16, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.Sequential(*[Block(d, heads, seq) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        t = ids.shape[1]
        pos = torch.arange(t).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        return self.head(self.ln(self.blocks(x)))


class LstmTiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


class RmsNorm(nn.Module):
    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.w = nn.Parameter(torch.rand(n) + 0.5)
        self.eps = eps

    def forward(self, x):
        return self.w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        angles = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat([angles, angles], -1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1))

    def rotate(self, x):
        half = x.shape[-1] // 2
        return x * self.cos + torch.cat([-x[..., half:], x[..., :half]], -1) * self.sin

    def forward(self, x):
        b, t, c = x.shape
        y = self.n1(x)
        split = lambda z: z.view(b, t, self.h, c // self.h).transpose(1, 2)
        q, k, v = self.rotate(split(self.q(y))), self.rotate(split(self.k(y))), split(self.v(y))
        att = torch.softmax(q @ k.transpose(-1, -2) / (c // self.h) ** 0.5 + self.mask, -1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, c))
        y = self.n2(x)
        return x + self.down(nn.functional.silu(self.gate(y)) * self.up(y))


class LlamaTiny(nn.Module):
    def __init__(self, d=64, heads=4, seq=16):
        super().__init__()
        self.blocks = nn.Sequential(LlamaBlock(d, heads, seq), LlamaBlock(d, heads, seq))

    def forward(self, x):
        return self.blocks(x)


def export(model, example, name, out, input_names, output_names):
    model.eval()
    for suffix, axes in (("", None),
                         ("_dynbatch", {n: {0: "batch"} for n in input_names + output_names})):
        path = os.path.join(out, f"{name}{suffix}.onnx")
        with torch.no_grad():
            torch.onnx.export(model, example, path, opset_version=17, input_names=input_names,
                              output_names=output_names, dynamic_axes=axes)
        print(f"wrote {path}")


def export_transformer_encoder(out):
    layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    # Training mode (dropout 0) keeps the exportable path: eval mode takes
    # PyTorch's fused fast path, which has no ONNX export.
    enc.train()
    path = os.path.join(out, "transformer_enc_dynbatch.onnx")
    with torch.no_grad():
        torch.onnx.export(enc, torch.randn(1, 10, 64), path, opset_version=17,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False)
    print(f"wrote {path}")


class Conv1D(nn.Module):
    """Hugging Face GPT-2's linear layer: addmm on the flattened rows."""

    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x):
        y = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return y.view(x.size()[:-1] + (self.weight.size(1),))


class Gpt2Block(nn.Module):
    def __init__(self, d=32, heads=4, seq=16):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.proj = Conv1D(d, 3 * d), Conv1D(d, d)
        self.fc, self.out = Conv1D(d, 4 * d), Conv1D(4 * d, d)
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq, dtype=torch.bool)).view(1, 1, seq, seq))

    def forward(self, x):
        b, t, d = x.shape
        split = lambda z: z.view(b, t, self.heads, d // self.heads).permute(0, 2, 1, 3)
        q, k, v = (split(z) for z in self.attn(self.ln1(x)).split(d, dim=2))
        w = torch.matmul(q, k.transpose(-1, -2)) / float(d // self.heads) ** 0.5
        w = torch.where(self.bias[:, :, :t, :t], w, torch.tensor(-1e4))
        y = torch.matmul(torch.softmax(w, -1), v).permute(0, 2, 1, 3).contiguous().view(b, t, d)
        x = x + self.proj(y)
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt2Conv1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Gpt2Block(), Gpt2Block())
        self.ln = nn.LayerNorm(32)

    def forward(self, x):
        return self.ln(self.blocks(x))


class MbConv(nn.Module):
    def __init__(self, c=16, e=64, se=4):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(c, e, 1, bias=False), nn.BatchNorm2d(e), nn.SiLU())
        self.dw = nn.Sequential(nn.Conv2d(e, e, 3, padding=1, groups=e, bias=False),
                                nn.BatchNorm2d(e), nn.SiLU())
        self.se = nn.Sequential(nn.Conv2d(e, se, 1), nn.SiLU(), nn.Conv2d(se, e, 1), nn.Sigmoid())
        self.proj = nn.Sequential(nn.Conv2d(e, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        y = self.dw(self.expand(x))
        return x + self.proj(y * self.se(y.mean((2, 3), keepdim=True)))


class EffnetSilu(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        self.blocks = nn.Sequential(MbConv(), MbConv())
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


def export_spellings(out):
    torch.manual_seed(2)
    eff = EffnetSilu()
    for m in eff.modules():  # non-trivial BatchNorm statistics
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    for model, example, name, inputs, outputs in (
            (Gpt2Conv1d(), torch.randn(1, 16, 32), "gpt2_conv1d", ["x"], ["y"]),
            (eff, torch.randn(1, 3, 32, 32), "effnet_silu", ["image"], ["logits"])):
        path = os.path.join(out, f"{name}.onnx")
        model.eval()
        with torch.no_grad():
            torch.onnx.export(model, example, path, opset_version=17, input_names=inputs,
                              output_names=outputs)
        print(f"wrote {path}")


def export_dynseq(out):
    torch.manual_seed(1)
    gpt = GptTiny()
    layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    enc.train()
    for model, example, name, inputs, outputs in (
            (gpt, torch.randint(0, 100, (1, 16)), "gpt_tiny_dynseq", ["input_ids"], ["logits"]),
            (enc, torch.randn(1, 10, 64), "transformer_enc_dynseq", ["x"], ["y"])):
        path = os.path.join(out, f"{name}.onnx")
        axes = {n: {0: "batch", 1: "seq"} for n in inputs + outputs}
        with torch.no_grad():
            torch.onnx.export(model, example, path, opset_version=17, input_names=inputs,
                              output_names=outputs, dynamic_axes=axes,
                              training=torch.onnx.TrainingMode.PRESERVE,
                              do_constant_folding=False)
        print(f"wrote {path}")


def main():
    out = sys.argv[1]
    only = sys.argv[2] if len(sys.argv) > 2 else None
    if only in ("--dynseq-only", "--spellings-only"):
        os.makedirs(out, exist_ok=True)
        (export_dynseq if only == "--dynseq-only" else export_spellings)(out)
        return
    os.makedirs(out, exist_ok=True)
    mob = MobileNetDw()
    for m in mob.modules():  # non-trivial BatchNorm statistics
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    export(mob, torch.randn(1, 3, 32, 32), "mobilenet_dw", out, ["image"], ["logits"])
    export(GptTiny(), torch.randint(0, 100, (1, 16)), "gpt_tiny", out, ["input_ids"], ["logits"])
    export(LstmTiny(), torch.randn(1, 12, 8), "lstm_tiny", out, ["sequence"], ["scores"])
    export(LlamaTiny(), torch.randn(1, 16, 64), "llama_tiny", out, ["hidden"], ["out"])
    export_transformer_encoder(out)
    export_dynseq(out)
    export_spellings(out)


if __name__ == "__main__":
    main()
