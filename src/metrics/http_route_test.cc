// Path patterns of the HTTP endpoints: literal segments and {name}
// segments, nothing else.
#include "metrics/http_route.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(MatchPath, LiteralAndNamedSegments) {
  std::map<std::string, std::string> p;
  EXPECT_TRUE(MatchPath("/metrics", "/metrics", &p));
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(MatchPath("/", "/", &p));
  EXPECT_FALSE(MatchPath("/metrics", "/metrics/", &p));
  EXPECT_FALSE(MatchPath("/metrics", "/metric", &p));
  EXPECT_FALSE(MatchPath("/index.html", "/indexXhtml", &p));
  ASSERT_TRUE(MatchPath("/v2/models/{model}/versions/{version}/infer",
                        "/v2/models/lenet5/versions/1/infer", &p));
  EXPECT_EQ(p.at("model"), "lenet5");
  EXPECT_EQ(p.at("version"), "1");
  EXPECT_FALSE(MatchPath("/v2/models/{model}/infer", "/v2/models//infer", &p));
  EXPECT_FALSE(
      MatchPath("/v2/models/{model}/infer", "/v2/models/a/b/infer", &p));
  EXPECT_FALSE(MatchPath("/v2/models/{model}", "/v2/models/a/infer", &p));
}

TEST(MatchPath, LongPathsCostNoRecursion) {
  const std::string path = "/v2/models/" + std::string(1 << 20, 'a');
  std::map<std::string, std::string> p;
  ASSERT_TRUE(MatchPath("/v2/models/{model}", path, &p));
  EXPECT_EQ(p.at("model").size(), size_t{1} << 20);
}

}  // namespace
}  // namespace shoal
