#include "discovery/worker_txt.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

WorkerAdvert Pi() {
  WorkerAdvert a;
  a.name = "pi-kitchen";
  a.cores = 4;
  a.memory_bytes = int64_t{1} << 30;
  a.version = "0.1.0";
  a.protocol = 3;
  a.tls = true;
  return a;
}

TEST(WorkerTxt, ReadsBackWhatItWrites) {
  const auto txt = EncodeWorkerTxt(Pi());
  EXPECT_EQ(txt.front(), "txtvers=1");
  auto a = DecodeWorkerTxt(TxtEntries(txt));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->name, "pi-kitchen");
  EXPECT_EQ(a->cores, 4);
  EXPECT_EQ(a->memory_bytes, int64_t{1} << 30);
  EXPECT_EQ(a->version, "0.1.0");
  EXPECT_EQ(a->protocol, 3u);
  EXPECT_TRUE(a->tls);
}

TEST(WorkerTxt, FirstOccurrenceOfAKeyCounts) {
  auto m = TxtEntries({"name=a", "name=b", "flag", "empty="});
  EXPECT_EQ(m["name"], "a");
  EXPECT_EQ(m.count("flag"), 1u);
  EXPECT_EQ(m["flag"], "");
  EXPECT_EQ(m["empty"], "");
}

TEST(WorkerTxt, OptionalKeysHaveDefaults) {
  auto a =
      DecodeWorkerTxt(TxtEntries({"name=pi0", "protocol=3", "version=0.1.0"}));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->cores, 1);
  EXPECT_EQ(a->memory_bytes, 0);
  EXPECT_FALSE(a->tls);
}

// A record from any host on the network: each bad value is named.
TEST(WorkerTxt, HostileRecordsAreNamedNotTrusted) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"protocol=3", "version=0.1.0"}, "no name"},
      {{"name=pi0", "version=0.1.0"}, "no protocol"},
      {{"name=pi0", "protocol=3"}, "no version"},
      {{"name=../../etc", "protocol=3", "version=0.1.0"}, "name"},
      {{"name=", "protocol=3", "version=0.1.0"}, "name"},
      {{"name=pi0", "protocol=three", "version=0.1.0"}, "protocol"},
      {{"name=pi0", "protocol=-1", "version=0.1.0"}, "protocol"},
      {{"name=pi0", "protocol=99999999999", "version=0.1.0"}, "protocol"},
      {{"name=pi0", "protocol=3", "version=0.1\n"}, "version"},
      {{"name=pi0", "protocol=3", "version=" + std::string(100, '9')},
       "version"},
      {{"name=pi0", "protocol=3", "version=0.1.0", "cores=0"}, "cores"},
      {{"name=pi0", "protocol=3", "version=0.1.0", "cores=4x"}, "cores"},
      {{"name=pi0", "protocol=3", "version=0.1.0", "memory=1e99"}, "memory"},
      {{"name=pi0", "protocol=3", "version=0.1.0", "memory=-5"}, "memory"},
      {{"name=pi0", "protocol=3", "version=0.1.0", "tls=yes"}, "tls"},
  };
  for (const auto& [txt, key] : cases) {
    auto a = DecodeWorkerTxt(TxtEntries(txt));
    ASSERT_FALSE(a.ok()) << txt.front();
    EXPECT_NE(a.status().message().find(key), std::string::npos)
        << a.status().message();
  }
}

}  // namespace
}  // namespace shoal
