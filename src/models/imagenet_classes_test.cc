#include "models/imagenet_classes.h"

#include <gtest/gtest.h>

#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

// The shipped list is torchvision's, name for name (the oracle of the
// tests; scripts/gen-imagenet-classes.py writes the list from it).
TEST(ImagenetClasses, AreTorchvisionsInOrder) {
  std::string out;
  const int rc = onnx_test::RunCommand(
      "/usr/bin/python3 -c \"from torchvision.models._meta import "
      "_IMAGENET_CATEGORIES as c; print(chr(10).join(c))\"",
      &out);
  if (rc != 0 && out.find("ModuleNotFoundError") != std::string::npos) {
    GTEST_SKIP() << "python3-torchvision is not installed: " << out;
  }
  ASSERT_EQ(rc, 0) << out;
  size_t pos = 0;
  for (size_t i = 0; i < kImagenetClasses; ++i) {
    const size_t end = out.find('\n', pos);
    ASSERT_NE(end, std::string::npos) << "torchvision lists only " << i;
    EXPECT_EQ(out.substr(pos, end - pos), ImagenetClassNames()[i]) << i;
    pos = end + 1;
  }
  EXPECT_EQ(pos, out.size()) << "torchvision lists more than 1000";
}

}  // namespace
}  // namespace shoal
