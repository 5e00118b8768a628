#!/usr/bin/env python3
"""PyTorch's side of bench/engine_vs_pytorch.sh.

  torch_side.py export OUTDIR NAME...        NAME.onnx for shoal, per model
  torch_side.py time NAME THREADS RUNS WARMUP  median/p90/min latency (JSON)

NAME is a torchvision model (random weights, eval mode, 1x3x224x224; a
segmentation model's "out"; a detection model's backbone feature maps,
flattened and concatenated), or `lenet5`, a LeNet-5 written to match
shoal's zoo (1x1x28x28). Both sides run
the same network: shoal runs the ONNX file this script exports from the
model PyTorch times (torch.onnx.export folds BatchNorm into the conv, as
shoal's oneDNN backend does itself).
"""
import json
import statistics
import sys
import time
import warnings

import torch
import torch.nn as nn
import torchvision


class LeNet5(nn.Module):
    """shoal's zoo lenet5 (src/models/lenet.cc): conv1 padded by 2."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.conv3 = nn.Conv2d(16, 120, 5)
        self.fc1 = nn.Linear(120, 84)
        self.fc2 = nn.Linear(84, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(torch.relu(self.conv3(x)), 1)
        return self.fc2(torch.relu(self.fc1(x)))


SEGMENTATION = ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large",
                "fcn_resnet50")
# Exported at opset 17: their LayerNorm is one LayerNormalization node
# there (at 13 it is ReduceMean, Sub, Pow, Sqrt, Div), as PyTorch runs it.
OPSET_17 = ("convnext_tiny", "vit_b_16", "swin_t", "maxvit_t") + SEGMENTATION + (
    "fasterrcnn_mobilenet_v3_large_fpn", "fasterrcnn_resnet50_fpn",
    "retinanet_resnet50_fpn", "ssdlite320_mobilenet_v3_large", "ssd300_vgg16")


class OutOnly(nn.Module):
    """Segmentation models return a dict; both sides take its "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


# Detection models: their backbone (with FPN or extra layers), by input size.
DETECTION = {"fasterrcnn_mobilenet_v3_large_fpn": 224,
             "fasterrcnn_resnet50_fpn": 224, "retinanet_resnet50_fpn": 224,
             "ssdlite320_mobilenet_v3_large": 320, "ssd300_vgg16": 300}


class BackboneFeatures(nn.Module):
    """A detection backbone's feature maps, flattened and concatenated: one
    output for both sides."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        y = self.backbone(x)
        maps = list(y.values()) if isinstance(y, dict) else list(y)
        return torch.cat([m.flatten(1) for m in maps], 1)


def build(name):
    torch.manual_seed(0)
    if name == "lenet5":
        return LeNet5().eval(), (1, 1, 28, 28)
    if name in DETECTION:
        det = getattr(torchvision.models.detection, name)
        size = DETECTION[name]
        return (BackboneFeatures(det(weights=None, weights_backbone=None).backbone).eval(),
                (1, 3, size, size))
    if name in SEGMENTATION:
        seg = getattr(torchvision.models.segmentation, name)
        return OutOnly(seg(weights=None, weights_backbone=None)).eval(), (1, 3, 224, 224)
    return getattr(torchvision.models, name)(weights=None).eval(), (1, 3, 224, 224)


def export(outdir, names):
    for name in names:
        model, shape = build(name)
        # Not under no_grad: there an eval-mode transformer takes PyTorch's
        # fused attention (_native_multi_head_attention), which ONNX lacks.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, torch.randn(*shape), f"{outdir}/{name}.onnx",
                              opset_version=17 if name in OPSET_17 else 13,
                              input_names=["input"],
                              output_names=["output"])


def time_model(name, threads, runs, warmup):
    torch.set_num_threads(threads)
    model, shape = build(name)
    x = torch.randn(*shape)
    ms = []
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        for _ in range(runs):
            t0 = time.perf_counter()
            model(x)
            ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    print(json.dumps({"model": name, "threads": torch.get_num_threads(),
                      "latency_ms": {"median": statistics.median(ms),
                                     "p90": ms[max(0, -(-9 * len(ms) // 10) - 1)],
                                     "min": ms[0]}}))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 6 and sys.argv[1] == "time":
        time_model(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
