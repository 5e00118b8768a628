#!/usr/bin/env python3
"""Independent oracle for shoal's reference kernels (ref oracle_test.cc).

Usage: ref_ops_oracle.py DIR

DIR/manifest.json lists cases: {"id", "op", "attrs", "inputs": [{"file",
"shape"} or null], "num_outputs"}. Inputs are raw little-endian float32.
For each case this computes the ONNX op with PyTorch (numpy where PyTorch has
no equivalent) in float64, writes output k to DIR/<id>.out<k>.bin as raw
little-endian float64, and writes the output shapes to DIR/result.json.

Exits 77 when torch or numpy cannot be imported, so the caller can skip.
"""
import json
import math
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # pragma: no cover
    print("ref_ops_oracle: %s" % e, file=sys.stderr)
    sys.exit(77)


def spatial_pads(x, attrs, kernel):
    """Explicit [begin..., end...] pads, resolving auto_pad per the ONNX spec."""
    r = x.dim() - 2
    strides = attrs.get("strides", [1] * r)
    dilations = attrs.get("dilations", [1] * r)
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(r):
            n = x.shape[2 + i]
            out = -(-n // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - n)
            small, big = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else big)
            end.append(big if auto_pad == "SAME_UPPER" else small)
        return begin + end
    if auto_pad == "VALID":
        return [0] * (2 * r)
    return attrs.get("pads", [0] * (2 * r))


def torch_pad_arg(pads):
    """ONNX [b1, b2, .., e1, e2, ..] to F.pad's last-axis-first pairs."""
    r = len(pads) // 2
    out = []
    for i in reversed(range(r)):
        out += [pads[i], pads[r + i]]
    return out


def conv(x, w, b, a):
    r = x.dim() - 2
    pads = spatial_pads(x, a, list(w.shape[2:]))
    x = F.pad(x, torch_pad_arg(pads))
    fn = [F.conv1d, F.conv2d, F.conv3d][r - 1]
    return fn(x, w, b, stride=a.get("strides", 1), dilation=a.get("dilations", 1),
              groups=a.get("group", 1))


def symmetric(pads):
    r = len(pads) // 2
    return pads[:r] == pads[r:]


def max_pool(x, a):
    r = x.dim() - 2
    k = a["kernel_shape"]
    pads = spatial_pads(x, a, k)
    fn = [F.max_pool1d, F.max_pool2d, F.max_pool3d][r - 1]
    kw = dict(stride=a.get("strides", [1] * r), dilation=a.get("dilations", 1),
              ceil_mode=bool(a.get("ceil_mode", 0)))
    if symmetric(pads):
        return fn(x, k, padding=pads[:r], **kw)
    # Asymmetric: pad with -inf by hand (the cases keep ceil_mode off).
    assert not kw["ceil_mode"]
    return fn(F.pad(x, torch_pad_arg(pads), value=-math.inf), k, padding=0, **kw)


def avg_pool(x, a):
    r = x.dim() - 2
    k = a["kernel_shape"]
    pads = spatial_pads(x, a, k)
    assert symmetric(pads), "asymmetric average pooling is hand-tested only"
    fn = [F.avg_pool1d, F.avg_pool2d, F.avg_pool3d][r - 1]
    return fn(x, k, stride=a.get("strides", [1] * r), padding=pads[:r],
              ceil_mode=bool(a.get("ceil_mode", 0)),
              count_include_pad=bool(a.get("count_include_pad", 0)))


def lrn(x, a):
    size = a["size"]
    kw = dict(alpha=a.get("alpha", 1e-4), beta=a.get("beta", 0.75), k=a.get("bias", 1.0))
    if size % 2 == 1:
        return F.local_response_norm(x, size, **kw)
    # PyTorch's window is c - size/2 .. c + size/2 - 1, ONNX's c - (size/2 - 1)
    # .. c + size/2: the same window on the channel-reversed tensor.
    return torch.flip(F.local_response_norm(torch.flip(x, [1]), size, **kw), [1])


def gemm(a_, b_, c_, a):
    if a.get("transA", 0):
        a_ = a_.t()
    if a.get("transB", 0):
        b_ = b_.t()
    y = a.get("alpha", 1.0) * (a_ @ b_)
    if c_ is not None:
        y = y + a.get("beta", 1.0) * c_
    return y


def reduce_mean(x, a):
    axes = a.get("axes") or list(range(x.dim()))
    return torch.mean(x, dim=axes, keepdim=bool(a.get("keepdims", 1)))


def reduce_l2(x, a):
    axes = a.get("axes") or list(range(x.dim()))
    return torch.sqrt(torch.sum(x * x, dim=axes,
                                keepdim=bool(a.get("keepdims", 1))))


def flatten(x, a):
    axis = a.get("axis", 1)
    if axis < 0:
        axis += x.dim()
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)


def reshape(x, a):
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(a["shape"])]
    return x.reshape(shape)


def transpose(x, a):
    perm = a.get("perm") or list(reversed(range(x.dim())))
    return x.permute(perm)


def slice_(x, a):
    n = len(a["starts"])
    axes = a.get("axes") or list(range(n))
    steps = a.get("steps") or [1] * n
    index = [slice(None)] * x.dim()
    for s, e, ax, st in zip(a["starts"], a["ends"], axes, steps):
        index[ax] = slice(s, e, st)
    # numpy: PyTorch has no negative steps. Python slices clamp like ONNX.
    return np.ascontiguousarray(x.numpy()[tuple(index)])


def split(x, a, n):
    axis = a.get("axis", 0)
    sizes = a.get("split") or [x.shape[axis] // n] * n
    return list(torch.split(x, sizes, dim=axis))


def pad(x, a):
    p = a["pads"]
    r = x.dim()
    width = [(p[i], p[r + i]) for i in range(r)]
    mode = a.get("mode", "constant")
    if mode == "constant":
        return np.pad(x.numpy(), width, mode="constant",
                      constant_values=a.get("value", 0.0))
    return np.pad(x.numpy(), width, mode=mode)


def space_to_depth(x, a):
    # The ONNX operator definition, step by step.
    b = a["blocksize"]
    n, c, h, w = x.shape
    t = x.numpy().reshape(n, c, h // b, b, w // b, b)
    t = t.transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def quant_params(x, a):
    """Scale and zero point shaped to broadcast over x (ONNX per-axis)."""
    scale = np.array(a["scale"], dtype=np.float32)
    zp = np.array(a.get("zero_point", [0] * len(scale)), dtype=np.float32)
    if len(scale) > 1:
        axis = a.get("axis", 1) % x.ndim
        shape = [1] * x.ndim
        shape[axis] = len(scale)
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    return scale, zp


def quantize_linear(x, a):
    """ONNX QuantizeLinear to int8, computed as the spec states it: f32
    division, round half to even (np.rint), add the zero point, saturate."""
    x = x.numpy().astype(np.float32)
    scale, zp = quant_params(x, a)
    return np.clip(np.rint(x / scale) + zp, -128, 127)


def dequantize_linear(x, a):
    x = x.numpy().astype(np.float32)
    scale, zp = quant_params(x, a)
    return (x - zp) * scale


def compute(op, ins, a, num_outputs):
    x = ins[0]
    unary = {
        "Relu": lambda: F.relu(x),
        "LeakyRelu": lambda: F.leaky_relu(x, a.get("alpha", 0.01)),
        "Clip": lambda: torch.clamp(x, a.get("min"), a.get("max")),
        "Sigmoid": lambda: torch.sigmoid(x),
        "HardSwish": lambda: F.hardswish(x),
        "Identity": lambda: x.clone(),
        "Dropout": lambda: F.dropout(x, a.get("ratio", 0.5), training=False),
        "Softmax": lambda: torch.softmax(x, a.get("axis", -1)),
        "GlobalAveragePool": lambda: x.mean(dim=list(range(2, x.dim())), keepdim=True),
        "GlobalMaxPool": lambda: x.amax(dim=list(range(2, x.dim())), keepdim=True),
        "MaxPool": lambda: max_pool(x, a),
        "AveragePool": lambda: avg_pool(x, a),
        "LRN": lambda: lrn(x, a),
        "ReduceMean": lambda: reduce_mean(x, a),
        "ReduceL2": lambda: reduce_l2(x, a),
        "Flatten": lambda: flatten(x, a),
        "Reshape": lambda: reshape(x, a),
        "Transpose": lambda: transpose(x, a),
        "Slice": lambda: slice_(x, a),
        "Pad": lambda: pad(x, a),
        "SpaceToDepth": lambda: space_to_depth(x, a),
        "QuantizeLinear": lambda: quantize_linear(x, a),
        "DequantizeLinear": lambda: dequantize_linear(x, a),
    }
    if op in unary:
        return [unary[op]()]
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div}
    if op in binary:
        return [binary[op](ins[0], ins[1])]
    if op == "Conv":
        return [conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)]
    if op == "Gemm":
        return [gemm(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)]
    if op == "MatMul":
        return [torch.matmul(ins[0], ins[1])]
    if op == "BatchNormalization":
        return [F.batch_norm(ins[0], ins[3], ins[4], weight=ins[1], bias=ins[2],
                             training=False, eps=a.get("epsilon", 1e-5))]
    if op == "Concat":
        return [torch.cat(ins, dim=a["axis"])]
    if op == "Split":
        return split(x, a, num_outputs)
    raise ValueError("oracle has no rule for op " + op)


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    result = {}
    for case in manifest["cases"]:
        ins = []
        for spec in case["inputs"]:
            if spec is None:
                ins.append(None)
                continue
            raw = np.fromfile(os.path.join(d, spec["file"]), dtype="<f4")
            ins.append(torch.from_numpy(raw.astype(np.float64).reshape(spec["shape"])))
        with torch.no_grad():
            outs = compute(case["op"], ins, case["attrs"], case["num_outputs"])
        shapes = []
        for k, y in enumerate(outs):
            y = y.numpy() if isinstance(y, torch.Tensor) else y
            y = np.array(y, dtype="<f8", order="C")  # keeps 0-d shapes
            y.tofile(os.path.join(d, "%s.out%d.bin" % (case["id"], k)))
            shapes.append(list(y.shape))
        result[case["id"]] = shapes
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
