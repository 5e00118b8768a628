// YOLOv2 as darknet's yolov2.cfg defines it (416x416, COCO: 80 classes, 5
// anchors), the FUSE paper's model: 50,962,889 params, 14.73G MACs. Names
// follow the common cfg-to-PyTorch parsers: "module_list.<i>.conv_<i>" for
// darknet layer i.
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

class Darknet {
 public:
  explicit Darknet(GraphBuilder& b) : b_(b) {}

  // [convolutional] batch_normalize=1, pad=1, activation=leaky.
  std::string Conv(const std::string& x, int64_t out, int64_t kernel) {
    const std::string p = Prefix();
    auto y = b_.Conv(p + "conv_" + Index(), x, out, kernel, 1, kernel / 2, 1,
                     /*bias=*/false);
    y = b_.BatchNorm(p + "batch_norm_" + Index(), y);
    ++layer_;
    return b_.LeakyRelu(y, 0.1f);
  }
  // [maxpool] size=2 stride=2.
  std::string MaxPool(const std::string& x) {
    auto y =
        b_.MaxPool(x, {2}, {2}, {0}, false, Prefix() + "maxpool_" + Index());
    ++layer_;
    return y;
  }
  // [reorg] stride=2 as ONNX SpaceToDepth: the same shape and cost, though
  // darknet's reorg orders the moved elements differently.
  std::string Reorg(const std::string& x) {
    Attrs a;
    a.Set("blocksize", int64_t{2});
    auto y = b_.Op("SpaceToDepth", {x}, a, Prefix() + "reorg_" + Index());
    ++layer_;
    return y;
  }
  // [route]: a layer that only names its inputs.
  std::string Route(const std::vector<std::string>& xs) {
    auto y = xs.size() == 1 ? xs[0] : b_.Concat(xs, 1);
    ++layer_;
    return y;
  }
  // The last [convolutional]: no BN, so a bias; linear activation.
  std::string ConvLinear(const std::string& x, int64_t out) {
    auto y = b_.Conv(Prefix() + "conv_" + Index(), x, out, 1, 1, 0);
    ++layer_;
    return y;
  }

 private:
  std::string Index() const { return std::to_string(layer_); }
  std::string Prefix() const { return "module_list." + Index() + "."; }

  GraphBuilder& b_;
  int layer_ = 0;
};

StatusOr<Graph> BuildYoloV2(const Shape& in) {
  GraphBuilder b("yolov2");
  Darknet d(b);
  auto x = b.Input("input", in);
  x = d.MaxPool(d.Conv(x, 32, 3));                                   // 0-1
  x = d.MaxPool(d.Conv(x, 64, 3));                                   // 2-3
  x = d.MaxPool(d.Conv(d.Conv(d.Conv(x, 128, 3), 64, 1), 128, 3));   // 4-7
  x = d.MaxPool(d.Conv(d.Conv(d.Conv(x, 256, 3), 128, 1), 256, 3));  // 8-11
  x = d.Conv(d.Conv(d.Conv(x, 512, 3), 256, 1), 512, 3);             // 12-14
  const std::string l16 = d.Conv(d.Conv(x, 256, 1), 512, 3);         // 15-16
  x = d.MaxPool(l16);                                                // 17
  x = d.Conv(d.Conv(d.Conv(x, 1024, 3), 512, 1), 1024, 3);           // 18-20
  x = d.Conv(d.Conv(x, 512, 1), 1024, 3);                            // 21-22
  const std::string l24 = d.Conv(d.Conv(x, 1024, 3), 1024, 3);       // 23-24
  // Passthrough: layer 16's 26x26 features, squeezed and reorganised to
  // 13x13, joined to the 1024-channel branch (route -1,-4 puts them first).
  x = d.Route({l16});                         // 25
  x = d.Reorg(d.Conv(x, 64, 1));              // 26-27
  x = d.Route({x, l24});                      // 28
  x = d.ConvLinear(d.Conv(x, 1024, 3), 425);  // 29-30: 5 x (80 + 5)
  return b.Finish({x});  // layer 31, [region], decodes boxes outside the graph
}

SHOAL_REGISTER_MODEL(
    "yolov2", "YOLOv2 416, COCO (80 classes, 5 anchors)",
    "darknet cfg/yolov2.cfg (Redmon & Farhadi 2016); FUSE paper",
    {1, 3, 416, 416}, 80, BuildYoloV2);

}  // namespace
}  // namespace shoal
