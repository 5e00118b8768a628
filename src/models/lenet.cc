// LeNet-5 and LeNet-FC (LeNet-300-100), the LCP paper's MNIST models.
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

// LeCun et al. 1998, on 28x28 inputs with conv1 padded by 2 (the usual
// reading for MNIST): 61,706 parameters, the LCP paper's "61.7k".
StatusOr<Graph> BuildLeNet5(const Shape& in) {
  GraphBuilder b("lenet5");
  auto x = b.Input("input", in);
  x = b.Relu(b.Conv("conv1", x, 6, 5, 1, 2));
  x = b.MaxPool(x, {2}, {2});
  x = b.Relu(b.Conv("conv2", x, 16, 5));
  x = b.MaxPool(x, {2}, {2});
  x = b.Relu(b.Conv("conv3", x, 120, 5));
  x = b.Flatten(x);
  x = b.Relu(b.Linear("fc1", x, 84));
  x = b.Linear("fc2", x, 10);
  return b.Finish({x});
}

// 784-300-100-10 perceptron: 266,610 parameters, 266,200 MACs (Table II).
StatusOr<Graph> BuildLeNetFc(const Shape& in) {
  GraphBuilder b("lenet-fc");
  auto x = b.Flatten(b.Input("input", in));
  x = b.Relu(b.Linear("fc1", x, 300));
  x = b.Relu(b.Linear("fc2", x, 100));
  x = b.Linear("fc3", x, 10);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("lenet5", "LeNet-5 for 28x28 grayscale digits / Fashion-MNIST",
                     "LeCun et al. 1998; LCP paper Table II", {1, 1, 28, 28}, 10,
                     BuildLeNet5);
SHOAL_REGISTER_MODEL("lenet-fc", "LeNet-300-100 fully connected network",
                     "LeCun et al. 1998; LCP paper Table II", {1, 1, 28, 28}, 10,
                     BuildLeNetFc);

}  // namespace
}  // namespace shoal
