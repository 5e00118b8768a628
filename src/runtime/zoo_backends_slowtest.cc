// oneDNN against the reference backend on every zoo model at its default
// input shape (slow: the reference kernels are plain loops).
#include <gtest/gtest.h>

#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

class ZooBackendsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooBackendsTest, OneDnnMatchesReference) {
  const ZooEntry* e = Zoo::Global().Find(GetParam());
  ASSERT_NE(e, nullptr);
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  ExpectBackendsAgree(*g, 11);
}

std::vector<std::string> ZooNames() {
  std::vector<std::string> out;
  for (const auto& e : Zoo::Global().entries()) out.push_back(e.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooBackendsTest, ::testing::ValuesIn(ZooNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace shoal
