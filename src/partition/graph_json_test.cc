#include "plan/graph_json.h"

#include <gtest/gtest.h>

#include "models/builder.h"

namespace shoal {
namespace {

// Each attribute's key was once read through an iterator already destroyed
// (found by fuzz_worker under ASan with every plan): the round trip of
// attributes of each kind is checked under the sanitizer builds.
TEST(GraphJson, AttributesOfEachKindRoundTrip) {
  GraphBuilder b("attrs");
  auto x = b.Input("input", {1, 2, 6, 6});
  x = b.Conv("conv", x, 3, 3, /*stride=*/2, /*pad=*/1);  // ints, int
  x = b.LeakyRelu(x, 0.25f);                             // float
  auto g = b.Finish({x});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto back = GraphFromJson(GraphToJson(*g));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->nodes.size(), g->nodes.size());
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    EXPECT_TRUE(back->nodes[i].attrs == g->nodes[i].attrs) << g->nodes[i].name;
  }
}

TEST(GraphJson, MalformedAttributesAreRefused) {
  GraphBuilder b("attrs");
  auto x = b.LeakyRelu(b.Input("input", {1, 4}), 0.5f);
  auto g = b.Finish({x});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const nlohmann::json good = GraphToJson(*g);
  for (const char* attr : {R"({"f": 1, "i": 2})", R"({"x": 1})", R"([1])",
                           R"({"f": "text"})", R"({})"}) {
    nlohmann::json j = good;
    j["nodes"][0]["attrs"]["alpha"] = nlohmann::json::parse(attr);
    auto r = GraphFromJson(j);
    EXPECT_FALSE(r.ok()) << attr;
  }
}

}  // namespace
}  // namespace shoal
