#!/usr/bin/env python3
"""Writes a small QDQ ONNX model with onnx.helper, an input and the output
the model should give, computed independently of shoal (numpy quantization
as the ONNX spec states it, PyTorch's conv and gemm).

Usage: qdq_model.py DIR   writes DIR/qdq.onnx, DIR/x.npy and DIR/y.npy.

The model: x -> Q -> DQ -> Conv(DQ(int8 w, per output channel), f32 bias)
-> Relu -> Q -> DQ -> Flatten -> Gemm(DQ(int8 w, per-tensor), f32 bias).
Exits 77 when onnx, numpy or torch cannot be imported.
"""
import os
import sys

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn.functional as F
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    print("qdq_model: %s" % e, file=sys.stderr)
    sys.exit(77)


def quantize(x, scale, zp, axis=None):
    x = x.astype(np.float32)
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp, np.float32)
    if axis is not None:
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    return np.clip(np.rint(x / scale) + zp, -128, 127)


def dequantize(q, scale, zp, axis=None):
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp, np.float32)
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    return (q.astype(np.float32) - zp) * scale


def main():
    d = sys.argv[1]
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (1, 2, 6, 6)).astype(np.float32)
    w1 = rng.integers(-128, 128, (4, 2, 3, 3)).astype(np.int8)
    s1 = np.array([0.004, 0.002, 0.003, 0.005], np.float32)
    b1 = rng.uniform(-0.1, 0.1, 4).astype(np.float32)
    w2 = rng.integers(-128, 128, (3, 36)).astype(np.int8)
    s2 = np.float32(0.01)
    b2 = rng.uniform(-0.1, 0.1, 3).astype(np.float32)
    sx, zx = np.float32(0.02), np.int8(-3)
    sa, za = np.float32(0.015), np.int8(-128)

    inits = [
        numpy_helper.from_array(np.array(sx), "sx"),
        numpy_helper.from_array(np.array(zx), "zx"),
        numpy_helper.from_array(w1, "w1"),
        numpy_helper.from_array(s1, "s1"),
        numpy_helper.from_array(np.zeros(4, np.int8), "z1"),
        numpy_helper.from_array(b1, "b1"),
        numpy_helper.from_array(np.array(sa), "sa"),
        numpy_helper.from_array(np.array(za), "za"),
        numpy_helper.from_array(w2, "w2"),
        numpy_helper.from_array(np.array(s2), "s2"),
        numpy_helper.from_array(np.array(np.int8(0)), "z2"),
        numpy_helper.from_array(b2, "b2"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], "q_x"),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"], "dq_x"),
        helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1d"], "dq_w1",
                         axis=0),
        helper.make_node("Conv", ["xd", "w1d", "b1"], ["c"], "conv",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"], "relu"),
        helper.make_node("QuantizeLinear", ["r", "sa", "za"], ["rq"], "q_r"),
        helper.make_node("DequantizeLinear", ["rq", "sa", "za"], ["rd"], "dq_r"),
        helper.make_node("Flatten", ["rd"], ["f"], "flatten"),
        helper.make_node("DequantizeLinear", ["w2", "s2", "z2"], ["w2d"], "dq_w2"),
        helper.make_node("Gemm", ["f", "w2d", "b2"], ["y"], "fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(d, "qdq.onnx"))

    xd = dequantize(quantize(x, sx, zx), sx, zx)
    w1d = dequantize(w1, s1, np.zeros(4), axis=0)
    c = F.conv2d(torch.from_numpy(xd), torch.from_numpy(w1d), torch.from_numpy(b1),
                 stride=2, padding=1)
    r = F.relu(c).numpy()
    rd = dequantize(quantize(r, sa, za), sa, za)
    w2d = dequantize(w2, s2, 0)
    y = torch.from_numpy(rd.reshape(1, -1)) @ torch.from_numpy(w2d).T + torch.from_numpy(b2)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
