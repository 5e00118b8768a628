#!/usr/bin/env python3
"""Exports PyTorch models to ONNX and records what PyTorch computes, for
shoal's ONNX import tests (src/onnx/onnx_torch_test.cc).

Usage: export_torchvision.py OUTDIR SPEC...

SPEC is NAME:OPSET[:FLAG...]. NAME is a torchvision classification model
(random weights, eval mode, input 1x3x224x224) or one of the small nets below
(`shapes`, `ops`). FLAGs:
  dyn  the first input dimension is dynamic ("batch")
  bn   keep BatchNormalization (no constant folding; torch otherwise fuses
       BN into the conv in eval mode). BN statistics are randomised.
  run  also write TAG.input.npy and TAG.output.npy (PyTorch's output)
TAG is SPEC with ':' replaced by '_'. For each SPEC this writes OUTDIR/TAG.onnx
and OUTDIR/TAG.json: {"output_shape", "macs" (conv + linear + matmul
multiply-accumulates, from forward hooks), "initializer_elements",
"float_initializer_elements", "ops" (op type counts)}.

Exits 77 when torch, torchvision or onnx cannot be imported, so the caller
can skip.
"""
import collections
import json
import os
import sys
import warnings

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
except ImportError as e:  # pragma: no cover
    print("export_torchvision: %s" % e, file=sys.stderr)
    sys.exit(77)


class ShapesNet(nn.Module):
    """Shape arithmetic PyTorch exports as int64 sub-graphs (Shape, Gather,
    Unsqueeze, Concat, ConstantOfShape, Slice with a negative step, Cast) and
    ops whose operands become shoal attributes (Pad, Slice, Split, Clip)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        y = self.conv(x)
        y = F.pad(y, (1, 2, 0, 1))
        y = y[:, :, 1:-1, ::2]
        a, b = torch.split(y, [3, 5], dim=1)
        y = torch.cat([b, a * 2.0], 1)
        y = y.view(y.size(0), -1)
        return torch.softmax(y.clamp(max=6.0), dim=1)


class OpsNet(nn.Module):
    """Grouped conv + BN, ReLU6, reflect Pad, chunk, ReduceMean, Squeeze and
    Unsqueeze of activations, Transpose, MatMul with a weight, Gemm."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.bn = nn.BatchNorm2d(6)
        self.w = nn.Parameter(torch.randn(3, 4) * 0.5)
        self.fc = nn.Linear(40, 5)

    def forward(self, x):
        y = F.relu6(self.bn(self.conv(x)))
        y = F.leaky_relu(y, 0.1)
        y = F.pad(y, (1, 1, 2, 0), mode="reflect")
        a, b = torch.chunk(y, 2, dim=1)
        y = a * torch.sigmoid(b)
        y = y.mean(dim=2, keepdim=True).squeeze(2)
        y = y.transpose(1, 2) @ self.w
        y = y.unsqueeze(1).flatten(1)
        return torch.softmax(self.fc(y), dim=-1)


CUSTOM = {"shapes": (ShapesNet, (1, 3, 16, 16)), "ops": (OpsNet, (1, 4, 8, 8))}


def build(name):
    torch.manual_seed(0)
    if name in CUSTOM:
        cls, shape = CUSTOM[name]
        return cls(), shape
    kwargs = {}
    if name == "googlenet":
        kwargs = dict(aux_logits=False, init_weights=True)
    return getattr(torchvision.models, name)(weights=None, **kwargs), (1, 3, 224, 224)


def randomise_bn(model):
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.weight.data = torch.rand(c, generator=g) + 0.5
            m.bias.data = torch.rand(c, generator=g) - 0.5
            m.running_mean.data = torch.rand(c, generator=g) - 0.5
            m.running_var.data = torch.rand(c, generator=g) + 0.5


def export(outdir, spec):
    parts = spec.split(":")
    name, opset, flags = parts[0], int(parts[1]), set(parts[2:])
    tag = spec.replace(":", "_")
    model, shape = build(name)
    randomise_bn(model)
    model.eval()

    macs = []
    out_shape = []

    def count(mod, inp, out):
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            macs.append(out.numel() * (mod.in_channels // mod.groups) * k)
        elif isinstance(mod, nn.Linear):
            macs.append(out.numel() * mod.in_features)

    for m in model.modules():
        m.register_forward_hook(count)
    # Each forward (export traces at least once) starts the count afresh.
    model.register_forward_pre_hook(lambda m, i: macs.clear())
    model.register_forward_hook(
        lambda m, i, o: out_shape.__setitem__(slice(None), [int(d) for d in o.shape]))

    x = torch.randn(*shape, generator=torch.Generator().manual_seed(2))
    path = os.path.join(outdir, tag + ".onnx")
    kwargs = dict(opset_version=opset, input_names=["input"], output_names=["output"])
    if "dyn" in flags:
        kwargs["dynamic_axes"] = {"input": {0: "batch"}, "output": {0: "batch"}}
    if "bn" in flags:
        kwargs["do_constant_folding"] = False
        kwargs["training"] = torch.onnx.TrainingMode.PRESERVE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, **kwargs)
    extra_macs = 0
    if name == "ops":  # the MatMul with self.w: [1, 10, 3] @ [3, 4]
        extra_macs = 10 * 3 * 4
    total_macs = sum(macs) + extra_macs

    if "run" in flags:
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(outdir, tag + ".input.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(outdir, tag + ".output.npy"), y.numpy().astype(np.float32))

    m = onnx.load(path)
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE)
    elems = lambda t: int(np.prod(t.dims)) if len(t.dims) else 1
    info = {
        "output_shape": out_shape,
        "macs": int(total_macs),
        "initializer_elements": sum(elems(t) for t in m.graph.initializer),
        "float_initializer_elements": sum(
            elems(t) for t in m.graph.initializer if t.data_type in floats),
        "ops": dict(collections.Counter(n.op_type for n in m.graph.node)),
    }
    with open(os.path.join(outdir, tag + ".json"), "w") as f:
        json.dump(info, f)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    for spec in sys.argv[2:]:
        export(outdir, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
