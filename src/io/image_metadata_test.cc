#include "io/image_metadata.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(ImageMetadata, ClassNamesRoundTrip) {
  ModelMetadata m;
  const std::vector<std::string> names = {"T-shirt/top", "Ankle boot",
                                          "quote \" and, comma", "ünï"};
  SetClassNames(names, &m);
  EXPECT_EQ(m.at(kClassNamesKey).front(), '[');  // a JSON array
  auto back = ClassNamesOf(m);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, names);
}

TEST(ImageMetadata, NormalizationRoundTripsBitForBit) {
  ModelMetadata m;
  ImageNormalization n;  // ImageNet's, whose values print with many digits
  SetImageNormalization(n, &m);
  auto back = ImageNormalizationOf(m, 3);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->mean, n.mean);
  EXPECT_EQ(back->std, n.std);
}

TEST(ImageMetadata, OneValueHoldsForEveryChannel) {
  ModelMetadata m = {{kImageMeanKey, "0"}, {kImageStdKey, " 1"}};
  auto n = ImageNormalizationOf(m, 3);
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n->mean, std::vector<float>({0, 0, 0}));
  EXPECT_EQ(n->std, std::vector<float>({1, 1, 1}));
}

TEST(ImageMetadata, NothingStatedGivesTheDefaults) {
  const ModelMetadata m = {{"author", "someone"}};
  auto names = ClassNamesOf(m);
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
  for (int64_t c : {1, 3}) {
    auto n = ImageNormalizationOf(m, c);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n->mean, DefaultNormalization(c).mean);
    EXPECT_EQ(n->std, DefaultNormalization(c).std);
  }
}

TEST(ImageMetadata, MalformedValuesNameTheKey) {
  auto names = ClassNamesOf({{kClassNamesKey, "cat,dog"}});
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.status().message().find(kClassNamesKey), std::string::npos);
  EXPECT_FALSE(ClassNamesOf({{kClassNamesKey, "[\"cat\", 3]"}}).ok());
  const std::vector<std::pair<ModelMetadata, std::string>> bad = {
      {{{kImageMeanKey, "0.5"}}, kImageStdKey},  // mean without std
      {{{kImageMeanKey, "0.5,x"}, {kImageStdKey, "1"}}, kImageMeanKey},
      {{{kImageMeanKey, ""}, {kImageStdKey, "1"}}, kImageMeanKey},
      {{{kImageMeanKey, "0,0"}, {kImageStdKey, "1"}}, kImageMeanKey},
      {{{kImageMeanKey, "0"}, {kImageStdKey, "0"}}, kImageStdKey},
      {{{kImageMeanKey, "0"}, {kImageStdKey, "nan"}}, kImageStdKey},
  };
  for (const auto& [m, key] : bad) {
    auto n = ImageNormalizationOf(m, 3);
    ASSERT_FALSE(n.ok()) << m.begin()->second;
    EXPECT_NE(n.status().message().find(key), std::string::npos)
        << n.status().message();
  }
}

}  // namespace
}  // namespace shoal
