// C3D (Tran et al. 2015) for Sports-1M, the collaborative-execution paper's
// video model: eight 3x3x3 convs over 16x112x112 clips, 79,991,015 params
// (the paper's "80M"). Layer names are the Caffe model's.
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

std::string Conv3(GraphBuilder& b, const std::string& name,
                  const std::string& x, int64_t out) {
  return b.Relu(b.Conv(name, x, out, 3, 1, 1));
}

StatusOr<Graph> BuildC3d(const Shape& in) {
  GraphBuilder b("c3d");
  auto x = b.Input("input", in);  // N, C, D (frames), H, W
  x = Conv3(b, "conv1a", x, 64);
  // pool1 keeps the time axis: early temporal pooling hurt in the paper.
  x = b.MaxPool(x, {1, 2, 2}, {1, 2, 2}, {0}, false, "pool1");
  x = Conv3(b, "conv2a", x, 128);
  x = b.MaxPool(x, {2}, {2}, {0}, false, "pool2");
  x = Conv3(b, "conv3a", x, 256);
  x = Conv3(b, "conv3b", x, 256);
  x = b.MaxPool(x, {2}, {2}, {0}, false, "pool3");
  x = Conv3(b, "conv4a", x, 512);
  x = Conv3(b, "conv4b", x, 512);
  x = b.MaxPool(x, {2}, {2}, {0}, false, "pool4");
  x = Conv3(b, "conv5a", x, 512);
  x = Conv3(b, "conv5b", x, 512);
  // 512x2x7x7 -> 512x1x4x4 = 8192, the fc6 input. Caffe gets 4 from 7 by
  // ceil mode; padding (0, 1, 1), as the PyTorch port does, gives the same
  // shape.
  x = b.MaxPool(x, {2}, {2}, {0, 1, 1}, false, "pool5");
  x = b.Flatten(x);
  x = b.Dropout(b.Relu(b.Linear("fc6", x, 4096)));
  x = b.Dropout(b.Relu(b.Linear("fc7", x, 4096)));
  x = b.Linear("fc8", x, 487);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL(
    "c3d", "C3D, Sports-1M video clips (16 frames)",
    "Tran et al. 2015 (Caffe C3D); collaborative-execution paper",
    {1, 3, 16, 112, 112}, 487, BuildC3d);

}  // namespace
}  // namespace shoal
