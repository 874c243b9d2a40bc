#!/usr/bin/env python3
"""Export two tiny Hugging Face transformers models (random weights) to ONNX.

Usage: /tmp/hfvenv/bin/python export_hf.py OUTDIR

Needs torch (tested: Debian python3-torch 1.13) and transformers==4.30.2.
No network access: models are built from configs, never from_pretrained.
Writes OUTDIR/bert_qa/model.onnx and OUTDIR/gpt2/model.onnx.
"""
import os
import sys

import torch
import transformers
from transformers import BertConfig, BertForQuestionAnswering, GPT2Config, GPT2LMHeadModel

OPSET = 14


def export_bert(outdir):
    torch.manual_seed(0)
    config = BertConfig(vocab_size=120, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=512, type_vocab_size=2)
    model = BertForQuestionAnswering(config).eval()

    batch, seq = 2, 16
    input_ids = torch.randint(0, config.vocab_size, (batch, seq), dtype=torch.int64)
    attention_mask = torch.ones(batch, seq, dtype=torch.int64)
    attention_mask[1, 12:] = 0
    token_type_ids = torch.zeros(batch, seq, dtype=torch.int64)
    token_type_ids[:, 8:] = 1

    d = os.path.join(outdir, "bert_qa")
    os.makedirs(d, exist_ok=True)
    names_in = ["input_ids", "attention_mask", "token_type_ids"]
    names_out = ["start_logits", "end_logits"]
    dyn = {n: {0: "batch", 1: "sequence"} for n in names_in + names_out}
    with torch.no_grad():
        torch.onnx.export(model, (input_ids, attention_mask, token_type_ids),
                          os.path.join(d, "model.onnx"),
                          input_names=names_in, output_names=names_out,
                          dynamic_axes=dyn, opset_version=OPSET,
                          do_constant_folding=True)


class GPT2Step(torch.nn.Module):
    """forward(input_ids, attention_mask, *flat_past) -> (logits, *flat_present)."""

    def __init__(self, model, n_layer):
        super().__init__()
        self.model = model
        self.n_layer = n_layer

    def forward(self, input_ids, attention_mask, *flat_past):
        past = tuple((flat_past[2 * i], flat_past[2 * i + 1]) for i in range(self.n_layer))
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         past_key_values=past, use_cache=True, return_dict=True)
        flat_present = []
        for k, v in out.past_key_values:
            flat_present += [k, v]
        return (out.logits, *flat_present)


def export_gpt2(outdir):
    config = GPT2Config(vocab_size=120, n_embd=32, n_layer=2, n_head=2,
                        n_positions=256, n_ctx=256, use_cache=True,
                        # Larger than the default 0.02 so greedy decoding varies
                        # (0.02 emits one token forever) with clear top-1/top-2 gaps.
                        initializer_range=0.8)
    export_gpt2_step(config, os.path.join(outdir, "gpt2"))


def export_gpt2_step(config, d):
    """GPT2LMHeadModel(config) with random weights (seed 0) as one decoder
    step with its KV cache, to d/model.onnx (bench/export_dynamic_models.py
    uses it too)."""
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config).eval()
    wrapper = GPT2Step(model, config.n_layer).eval()

    batch, past_len, seq = 2, 4, 3
    head_dim = config.n_embd // config.n_head
    input_ids = torch.randint(0, config.vocab_size, (batch, seq), dtype=torch.int64)
    attention_mask = torch.ones(batch, past_len + seq, dtype=torch.int64)
    flat_past = []
    for _ in range(config.n_layer):
        flat_past.append(torch.randn(batch, config.n_head, past_len, head_dim))
        flat_past.append(torch.randn(batch, config.n_head, past_len, head_dim))

    names_in = ["input_ids", "attention_mask"]
    names_out = ["logits"]
    dyn = {"input_ids": {0: "batch", 1: "seq"},
           "attention_mask": {0: "batch", 1: "total_seq"},
           "logits": {0: "batch", 1: "seq"}}
    for i in range(config.n_layer):
        for kv in ("key", "value"):
            n = f"past_key_values.{i}.{kv}"
            names_in.append(n)
            dyn[n] = {0: "batch", 2: "past_seq"}
            n = f"present.{i}.{kv}"
            names_out.append(n)
            dyn[n] = {0: "batch", 2: "total_seq"}

    os.makedirs(d, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(wrapper, (input_ids, attention_mask, *flat_past),
                          os.path.join(d, "model.onnx"),
                          input_names=names_in, output_names=names_out,
                          dynamic_axes=dyn, opset_version=OPSET,
                          do_constant_folding=True)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_hf.py OUTDIR")
    outdir = sys.argv[1]
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    export_bert(outdir)
    export_gpt2(outdir)


if __name__ == "__main__":
    main()
