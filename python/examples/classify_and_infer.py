# The example of docs/serve.md ("A Python client"): a PNG classified and a
# tensor inferred by `shoal serve --http` serving lenet5.
import sys
import zlib
import struct

import numpy as np
from shoal_client import Client

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
client = Client(url)
print("ready:", client.ready())
meta = client.metadata("lenet5")
print("input", meta["inputs"][0]["shape"], "output", meta["outputs"][0]["shape"])

# A 28x28 grayscale PNG made here (any JPEG or PNG file works the same).
pixels = (np.arange(28 * 28) * 37 % 256).astype(np.uint8).reshape(28, 28)
rows = b"".join(b"\x00" + row.tobytes() for row in pixels)
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 28, 28, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
for c in client.classify("lenet5", png, top_k=3):
    print("class", c["index"], "score %.3f" % c["score"])

x = np.random.default_rng(0).standard_normal((1, 1, 28, 28)).astype(np.float32)
y = client.infer("lenet5", x)
print("output", y.shape, "largest at", int(y.argmax()))
assert np.allclose(y, client.infer("lenet5", x, binary=False), rtol=1e-5)
