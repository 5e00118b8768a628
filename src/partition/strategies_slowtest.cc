// Every strategy on every zoo model, 2, 3 and 8 devices and an unequal
// cluster of four (4 and 6 equal devices cut nothing 2, 3 and 8 do not,
// and cost CI minutes): exact against the one-device run, communication as
// counted equal to the paper's formula where it applies. Large inputs are
// scaled down (the layer structure is the same; fc sizes follow the shape).
#include <gtest/gtest.h>

#include "models/load_model.h"
#include "partition/plan_test_util.h"

namespace shoal {
namespace {

struct Case {
  const char* model;
  Shape input;  // empty: the zoo default
};

class ZooStrategies : public ::testing::TestWithParam<Case> {};

TEST_P(ZooStrategies, EveryStrategyIsExact) {
  const Case& c = GetParam();
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  if (!c.input.empty()) lo.input_shape = c.input;
  auto m = LoadModel(c.model, lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const std::vector<std::vector<double>> clusters = {
      {1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 2, 3, 2}};
  testing::ExpectEveryStrategyExact(m.value(), clusters);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooStrategies,
                         ::testing::Values(Case{"alexnet", {}},
                                           Case{"vgg16", {1, 3, 64, 64}},
                                           Case{"resnet18", {1, 3, 64, 64}},
                                           Case{"resnet50", {1, 3, 32, 32}},
                                           Case{"mobilenet-v1", {1, 3, 64, 64}},
                                           Case{"mobilenet-v2", {1, 3, 96, 96}},
                                           Case{"xception", {1, 3, 96, 96}},
                                           Case{"c3d", {1, 3, 16, 32, 32}},
                                           Case{"yolov2", {1, 3, 128, 128}},
                                           Case{"vgg-s", {1, 3, 96, 96}}),
                         [](const auto& info) {
                           std::string n = info.param.model;
                           for (auto& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace shoal
