#!/usr/bin/env python3
"""Exports every torchvision classification model (random weights, batch 1,
opset 17) and asks `shoal analyze` to import it; prints one line per model:
OK with its totals, FAIL with shoal's error (which lists every unsupported
operator at once), NOT EXPORTED where torch.onnx cannot write the model, or
SKIPPED for size. Not part of `make test` (it takes about 20
minutes on 2 cores); docs/models.md gives its latest result.

  /usr/bin/python3 test/py/import_all_torchvision.py [--max-params N] [NAME...]

NAME limits the run to those models. Models with more than --max-params
parameters (default 150e6) are skipped: their export alone needs several GB.
Environment: SHOAL (default build/shoal).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-params", type=float, default=150e6)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shoal = os.environ.get("SHOAL", os.path.join(root, "build", "shoal"))
    names = a.names or torchvision.models.list_models(module=torchvision.models)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            model = torchvision.models.get_model(name, weights=None).eval()
            params = sum(p.numel() for p in model.parameters())
            if params > a.max_params:
                print(f"{name} SKIPPED ({params / 1e6:.0f}M parameters)", flush=True)
                continue
            size = 299 if name == "inception_v3" else 224
            path = os.path.join(tmp, name + ".onnx")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(model, torch.randn(1, 3, size, size), path,
                                      opset_version=17)
            except Exception as e:  # PyTorch's exporter, not shoal
                print(f"{name} NOT EXPORTED by torch: {str(e).splitlines()[0]}",
                      flush=True)
                continue
            r = subprocess.run([shoal, "analyze", path], capture_output=True, text=True)
            last = (r.stdout + r.stderr).strip().splitlines()[-1]
            print(f"{name} {'OK' if r.returncode == 0 else 'FAIL'} {last}", flush=True)
            failed += r.returncode != 0
            os.remove(path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
