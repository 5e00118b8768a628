#!/usr/bin/env python3
"""Independent oracle for shoal's int8 reference kernels (int8_oracle_test.cc).

Usage: int8_ops_oracle.py DIR

DIR/manifest.json lists cases: {"id", "op" (Conv, Gemm, MatMul), "attrs",
"x": {"file", "shape", "scale": [s], "zero_point": [z]}, "w": {"file",
"shape", "scale": [...], "zero_point": [...], "axis"}, "bias": {"file",
"shape"} or null}. Int8 values and the bias are raw little-endian float32.

For each case this centers the int8 values on their zero points, sums the
products exactly with PyTorch (the convolution in float64, exact for these
integers; Gemm and MatMul in int64), then scales each output channel by
float32(s_x * s_w[c]) and adds the bias in float64, as ONNX's ConvInteger
followed by one rescale. Writes DIR/<id>.y.bin (float64) and the shapes to
DIR/result.json. Exits 77 when torch or numpy cannot be imported.
"""
import json
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print("int8_ops_oracle: %s" % e, file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_ops_oracle  # noqa: E402  (its conv and gemm read ONNX attributes)


def load(d, spec):
    raw = np.fromfile(os.path.join(d, spec["file"]), dtype="<f4")
    return raw.astype(np.float64).reshape(spec["shape"])


def per_axis(values, ndim, axis):
    """A per-channel vector shaped to broadcast along `axis` of an ndim array."""
    v = np.array(values, dtype=np.float64)
    if len(v) == 1:
        return v.reshape([1] * ndim)
    shape = [1] * ndim
    shape[axis] = len(v)
    return v.reshape(shape)


def int8_case(d, case):
    op, a = case["op"], case["attrs"]
    xs, ws = case["x"], case["w"]
    xq, wq = load(d, xs), load(d, ws)
    for q in (xq, wq):
        assert np.all(q == np.rint(q)) and q.min() >= -128 and q.max() <= 127
    x = xq - xs["zero_point"][0]
    w = wq - per_axis(ws["zero_point"], wq.ndim, ws.get("axis", 0))
    if op == "Conv":
        acc = ref_ops_oracle.conv(torch.from_numpy(x), torch.from_numpy(w), None, a)
        acc = acc.numpy()
        assert np.abs(acc).max() < 2.0 ** 53  # float64 holds every sum exactly
        channel_axis = 1
    else:
        xi = torch.from_numpy(x.astype(np.int64))
        wi = torch.from_numpy(w.astype(np.int64))
        if op == "Gemm":
            acc = ref_ops_oracle.gemm(xi, wi, None, {k: v for k, v in a.items()
                                                     if k in ("transA", "transB")})
        else:
            acc = torch.matmul(xi, wi)
        acc = acc.numpy().astype(np.float64)
        channel_axis = acc.ndim - 1
    scales = np.float32(xs["scale"][0]) * np.array(ws["scale"], dtype=np.float32)
    y = acc * per_axis(scales.astype(np.float64), acc.ndim, channel_axis)
    if op == "Gemm":
        y = y * a.get("alpha", 1.0)
    if case["bias"] is not None:
        b = load(d, case["bias"])
        if op == "Conv":
            b = b.reshape([1, -1] + [1] * (acc.ndim - 2))
        y = y + a.get("beta", 1.0) * b
    return y


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    result = {}
    for case in manifest["cases"]:
        with torch.no_grad():
            y = np.array(int8_case(d, case), dtype="<f8", order="C")
        y.tofile(os.path.join(d, case["id"] + ".y.bin"))
        result[case["id"]] = list(y.shape)
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
