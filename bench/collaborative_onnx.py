#!/usr/bin/env python3
"""Single-layer ONNX models for the collaborative-execution paper's layer
benchmarks (bench/collaborative_splits.sh, bench/collaborative_layers.sh):
a dense layer, or a 2-D or 3-D convolution with the paper's "same" padding
(floor(f / 2)), exported by PyTorch. The weights are zeros: shoal's
predictions depend on shapes only, and zeros export fastest.

    collaborative_onnx.py - < SPECS

reads one model a line from stdin and writes each:

    OUT.onnx dense IN OUT                  # nn.Linear(IN, OUT), input 1xIN
    OUT.onnx conv2d C K F H W [S]          # nn.Conv2d(C, K, F), input 1xCxHxW
    OUT.onnx conv3d C K F D H W [S]        # nn.Conv3d(C, K, F), input 1xCxDxHxW

(S: stride, default 1). One process for all of them: PyTorch is imported
once.
"""
import sys

import torch


def build(kind, dims):
    if kind == "dense":
        i, o = dims
        m = torch.nn.utils.skip_init(torch.nn.Linear, i, o)
        return m, torch.zeros(1, i)
    if kind in ("conv2d", "conv3d"):
        n = 2 if kind == "conv2d" else 3
        c, k, f = dims[:3]
        space = dims[3:3 + n]
        stride = dims[3 + n] if len(dims) > 3 + n else 1
        cls = torch.nn.Conv2d if n == 2 else torch.nn.Conv3d
        m = torch.nn.utils.skip_init(cls, c, k, f, stride=stride, padding=f // 2)
        return m, torch.zeros(1, c, *space)
    raise SystemExit(f"unknown layer kind {kind!r}")


def main():
    if sys.argv[1:] != ["-"]:
        raise SystemExit(__doc__)
    torch.set_num_threads(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        out, kind, *rest = line.split()
        m, x = build(kind, [int(v) for v in rest])
        with torch.no_grad():
            for p in m.parameters():
                p.zero_()
        torch.onnx.export(m.eval(), x, out, input_names=["input"],
                          output_names=["output"], opset_version=13)


if __name__ == "__main__":
    main()
