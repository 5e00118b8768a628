// GraphBuilder: writes a model as code, one call per layer, inferring shapes
// as it goes so each layer can size its weights from its input. Weight
// tensors are named "<layer>.weight" / "<layer>.bias" like torchvision's.
#ifndef SHOAL_MODELS_BUILDER_H_
#define SHOAL_MODELS_BUILDER_H_

#include <string>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string model_name);

  std::string Input(const std::string& name, const Shape& shape);

  // Conv over the input's spatial axes; kernel/stride/pad/dilation given
  // with one value are used for every axis. `pad` (here and in the pools)
  // may also hold 2 x rank values, ONNX's [begins..., ends...], for the
  // asymmetric padding of TensorFlow's SAME at stride 2.
  struct ConvOpts {
    std::vector<int64_t> stride = {1};
    std::vector<int64_t> pad = {0};
    std::vector<int64_t> dilation = {1};
    int64_t group = 1;
    bool bias = true;
  };
  std::string Conv(const std::string& name, const std::string& x,
                   int64_t out_channels, std::vector<int64_t> kernel,
                   const ConvOpts& opts);
  std::string Conv(const std::string& name, const std::string& x,
                   int64_t out_channels, int64_t kernel, int64_t stride = 1,
                   int64_t pad = 0, int64_t group = 1, bool bias = true);
  std::string BatchNorm(const std::string& name, const std::string& x,
                        float epsilon = 1e-5f);
  std::string Linear(const std::string& name, const std::string& x,
                     int64_t out_features, bool bias = true);

  std::string Relu(const std::string& x);
  std::string LeakyRelu(const std::string& x, float alpha);
  std::string Clip(const std::string& x, float lo, float hi);
  std::string Sigmoid(const std::string& x);
  std::string HardSwish(const std::string& x);
  std::string Softmax(const std::string& x, int64_t axis = -1);
  std::string Dropout(const std::string& x, float ratio = 0.5f);

  std::string MaxPool(const std::string& x, std::vector<int64_t> kernel,
                      std::vector<int64_t> stride,
                      std::vector<int64_t> pad = {0}, bool ceil_mode = false,
                      const std::string& name = "");
  std::string AvgPool(const std::string& x, std::vector<int64_t> kernel,
                      std::vector<int64_t> stride,
                      std::vector<int64_t> pad = {0},
                      bool count_include_pad = false);
  std::string GlobalAvgPool(const std::string& x);
  // ONNX LRN: `size` channels in the window, `alpha` divided by `size`.
  std::string Lrn(const std::string& x, int64_t size, float alpha, float beta,
                  float bias, const std::string& name = "");

  std::string Add(const std::string& a, const std::string& b);
  std::string Mul(const std::string& a, const std::string& b);
  std::string Concat(const std::vector<std::string>& xs, int64_t axis);
  std::string Flatten(const std::string& x, int64_t axis = 1);
  std::string SpaceToDepth(const std::string& x, int64_t blocksize);

  // Generic node with one output; returns the output tensor name.
  std::string Op(const std::string& op, const std::vector<std::string>& inputs,
                 Attrs attrs = {}, const std::string& name = "");

  const Shape& ShapeOf(const std::string& tensor) const;

  // A learned tensor that ops read as an input (a class token, a position
  // embedding, a norm's scale, a constant factor); returns its name.
  std::string Weight(const std::string& name, const Shape& shape) {
    return AddWeight(name, shape);
  }

  // Marks the outputs and returns the verified graph, or the first error met
  // while building.
  StatusOr<Graph> Finish(const std::vector<std::string>& outputs);

 private:
  std::string Fresh(const std::string& op);
  std::vector<int64_t> Expand(std::vector<int64_t> v, size_t rank) const;
  std::vector<int64_t> OnnxPads(const std::vector<int64_t>& pad,
                                size_t rank) const;
  std::string AddWeight(const std::string& name, const Shape& shape);

  Graph g_;
  Status error_;
  int counter_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_MODELS_BUILDER_H_
