#!/usr/bin/env python3
"""Exports PyTorch models to ONNX and records what PyTorch computes, for
shoal's ONNX import tests (src/runtime/onnx_torch_test.cc).

Usage: export_torchvision.py OUTDIR SPEC...

SPEC is NAME:OPSET[:FLAG...]. NAME is a torchvision classification model
(random weights, eval mode, input 1x3x224x224), a segmentation model (its
"out"), a detection model (its backbone's feature maps, flattened and
concatenated) or one of the small nets below (`shapes`, `ops`). FLAGs:
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


class HardNet(nn.Module):
    """HardSigmoid and HardSwish (at opset 13 HardSwish is HardSigmoid * x)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x) * 4.0
        return F.hardswish(y) + F.hardsigmoid(y)


class GeluNet(nn.Module):
    """GELU (exported in its Erf form), Erf itself, Sqrt, Pow, Abs, Neg, Exp,
    Tanh."""

    def forward(self, x):
        y = F.gelu(x * 3.0) + torch.erf(x) - torch.exp(-x) * torch.tanh(x)
        return y + torch.sqrt(x.abs() + 0.5) + torch.pow(x, 2) + x ** 3


class LayerNormNet(nn.Module):
    """LayerNorm over the last axis and over the last two (a Softmax over a
    middle axis between); at opset 13 it is ReduceMean, Pow, Sqrt, Div."""

    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(16)
        self.ln2 = nn.LayerNorm([5, 16])
        with torch.no_grad():
            for ln in (self.ln1, self.ln2):
                ln.weight.uniform_(0.5, 1.5)
                ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        y = self.ln1(x)
        return self.ln2(torch.softmax(y, dim=1) * 10.0)


class SelectNet(nn.Module):
    """Where with a constant mask, Expand, Gather with constant indices (a
    scalar and a list), Transpose, ReduceMean over several axes, Softmax on
    axis 0 and 2."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.rand(1, 4, 6, 8) > 0.5)

    def forward(self, x):
        y = torch.where(self.mask, x, x * -2.0)
        first = y[:, 0]                                   # Gather, scalar index
        picked = y[:, [3, 1]]                             # Gather, index list
        e = first.unsqueeze(1).expand(1, 3, 6, 8)         # Expand
        t = torch.cat([picked, e], 1).permute(0, 2, 3, 1)  # Transpose
        m = t.mean(dim=(1, 3), keepdim=True)              # ReduceMean
        return torch.softmax(t, dim=2) + torch.softmax(m, dim=0) + m


class ResizeNet(nn.Module):
    """Resize as segmentation heads use it: bilinear to a size, nearest by a
    scale factor, bilinear with align_corners."""

    def forward(self, x):
        a = F.interpolate(x, size=(11, 13), mode="bilinear", align_corners=False)
        b = F.interpolate(x, scale_factor=2, mode="nearest")
        c = F.interpolate(x, size=(11, 13), mode="bilinear", align_corners=True)
        return torch.cat([a, F.interpolate(b, size=(11, 13), mode="nearest"), c], 1)


class DenseNet(nn.Module):
    """Bias-free Linear layers (exported as MatMul by a constant weight) and
    one with a bias (Gemm)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 96, bias=False)
        self.fc2 = nn.Linear(96, 48, bias=False)
        self.fc3 = nn.Linear(48, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class TokensNet(nn.Module):
    """Linear on [1, tokens, features] (MatMul + Add) and attention's MatMul
    of two activations."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(16, 16)
        self.k = nn.Linear(16, 16, bias=False)

    def forward(self, x):
        q, k = self.q(x), self.k(x)
        a = torch.softmax(q @ k.transpose(1, 2) / 4.0, dim=-1)
        return a @ x


class VitNet(nn.Module):
    """torchvision's VisionTransformer, small: 17 tokens of 64 features, 4
    heads of 16, two blocks. Its nn.MultiheadAttention exports Q, K and V
    as one projection of 192 columns cut by Slice; below opset 17 its
    LayerNorms are ReduceMean, Sub, Pow, Sqrt, Div, Mul, Add. The biases
    torchvision zeroes are randomised, so every weight is read."""

    def __init__(self):
        super().__init__()
        self.vit = torchvision.models.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=4,
            hidden_dim=64, mlp_dim=128, num_classes=10)
        g = torch.Generator().manual_seed(4)
        with torch.no_grad():
            for name, p in self.vit.named_parameters():
                if name.endswith("bias"):
                    p.copy_(torch.randn(p.shape, generator=g) * 0.1)

    def forward(self, x):
        return self.vit(x)


class SwinNet(nn.Module):
    """torchvision's SwinTransformer, small: a 64x64 image in patches of 4
    makes a 16x16 map of 16 features; windows of 4x4 tokens, shifted by 2
    in every second block; three stages of two blocks (maps 16x16, 8x8 and
    4x4: 16, 4 and 1 windows; the last is one window, so its blocks do not
    shift). Biases are randomised, as in VitNet."""

    def __init__(self):
        super().__init__()
        self.swin = torchvision.models.swin_transformer.SwinTransformer(
            patch_size=[4, 4], embed_dim=16, depths=[2, 2, 2],
            num_heads=[2, 2, 4], window_size=[4, 4], num_classes=10)
        g = torch.Generator().manual_seed(5)
        with torch.no_grad():
            for name, p in self.swin.named_parameters():
                if name.endswith("bias"):
                    p.copy_(torch.randn(p.shape, generator=g) * 0.1)

    def forward(self, x):
        return self.swin(x)


CUSTOM = {"shapes": (ShapesNet, (1, 3, 16, 16)), "ops": (OpsNet, (1, 4, 8, 8)),
          "hard": (HardNet, (1, 3, 8, 8)), "gelu": (GeluNet, (1, 5, 16)),
          "layernorm": (LayerNormNet, (1, 5, 16)),
          "select": (SelectNet, (1, 4, 6, 8)), "resize": (ResizeNet, (1, 3, 5, 7)),
          "dense": (DenseNet, (1, 64)), "tokens": (TokensNet, (1, 7, 16)),
          "vit": (VitNet, (1, 3, 32, 32)), "swin": (SwinNet, (1, 3, 64, 64))}

SEGMENTATION = ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large",
                "fcn_resnet50")


class OutOnly(nn.Module):
    """Segmentation models return a dict; the export takes its "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


# Detection models whose backbone (with its FPN or extra layers) is
# exported, by input size.
DETECTION = {"fasterrcnn_mobilenet_v3_large_fpn": 224,
             "fasterrcnn_resnet50_fpn": 224, "retinanet_resnet50_fpn": 224,
             "fcos_resnet50_fpn": 224, "ssdlite320_mobilenet_v3_large": 320,
             "ssd300_vgg16": 300}


class BackboneFeatures(nn.Module):
    """A detection backbone returns several feature maps (a dict for the
    FPNs, a list for SSD's); the export flattens and concatenates them, so
    that one output checks every level."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        y = self.backbone(x)
        maps = list(y.values()) if isinstance(y, dict) else list(y)
        return torch.cat([m.flatten(1) for m in maps], 1)


def build(name):
    torch.manual_seed(0)
    if name in CUSTOM:
        cls, shape = CUSTOM[name]
        return cls(), shape
    if name in DETECTION:
        det = getattr(torchvision.models.detection, name)
        model = det(weights=None, weights_backbone=None)
        size = DETECTION[name]
        return BackboneFeatures(model.backbone), (1, 3, size, size)
    if name in SEGMENTATION:
        seg = getattr(torchvision.models.segmentation, name)
        return OutOnly(seg(weights=None, weights_backbone=None)), (1, 3, 224, 224)
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


def randomise_zero_init(model):
    """Layers torchvision initialises to zero (vit's classifier head) would
    make every output 0 and the comparison vacuous; LayerNorm's unit scale
    and zero shift would leave its affine part untested."""
    g = torch.Generator().manual_seed(3)
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)) and not m.weight.detach().any():
            m.weight.data = torch.randn(m.weight.shape, generator=g) * 0.02
        if isinstance(m, nn.LayerNorm) and m.elementwise_affine:
            n = m.weight.numel()
            m.weight.data = (torch.rand(n, generator=g) + 0.5).reshape(m.weight.shape)
            m.bias.data = (torch.rand(n, generator=g) - 0.5).reshape(m.bias.shape)


def export(outdir, spec):
    parts = spec.split(":")
    name, opset, flags = parts[0], int(parts[1]), set(parts[2:])
    tag = spec.replace(":", "_")
    model, shape = build(name)
    randomise_bn(model)
    randomise_zero_init(model)
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
