#include "util/net_address.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(SplitHostPort, NameAndPort) {
  auto hp = SplitHostPort("pi-kitchen.local:7000", "x");
  ASSERT_TRUE(hp.ok()) << hp.status().message();
  EXPECT_EQ(hp->host, "pi-kitchen.local");
  EXPECT_EQ(hp->port, 7000);
}

TEST(SplitHostPort, HostAlone) {
  auto hp = SplitHostPort("10.0.0.7", "x");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "10.0.0.7");
  EXPECT_EQ(hp->port, -1);
}

TEST(SplitHostPort, Ipv6InBrackets) {
  auto hp = SplitHostPort("[fd00::2]:7001", "x");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "fd00::2");
  EXPECT_EQ(hp->port, 7001);
  auto bare = SplitHostPort("[::1]", "x");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->host, "::1");
  EXPECT_EQ(bare->port, -1);
}

TEST(SplitHostPort, BadInputNamesTheString) {
  for (const char* s : {"", ":7000", "host:", "host:x", "host:70000", "host:-1",
                        "fd00::2:7000", "[fd00::2", "[::1]7000"}) {
    auto hp = SplitHostPort(s, "device pi1's address");
    ASSERT_FALSE(hp.ok()) << s;
    EXPECT_NE(hp.status().message().find("device pi1's address"),
              std::string::npos)
        << hp.status().message();
  }
}

TEST(JoinHostPort, BracketsIpv6) {
  EXPECT_EQ(JoinHostPort("10.1.2.3", 80), "10.1.2.3:80");
  EXPECT_EQ(JoinHostPort("pi.local", 0), "pi.local:0");
  EXPECT_EQ(JoinHostPort("fd00::2", 7), "[fd00::2]:7");
}

TEST(ResolveHost, LiteralsAndHostsFile) {
  auto a = ResolveHost("127.0.0.1", 2000, "x");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "127.0.0.1");
  // /etc/hosts: the system resolver, as nsswitch says.
  auto l = ResolveHost("localhost", 2000, "x");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_TRUE(*l == "127.0.0.1" || *l == "::1") << *l;
}

TEST(LocalAddressToward, LoopbackGivesLoopback) {
  auto a = LocalAddressToward("127.0.0.1:7000", 2000, "x");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, "127.0.0.1");
  auto none = LocalAddressToward("127.0.0.1", 2000, "device d0's address");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("has no port"), std::string::npos);
}

TEST(ChooseReplyEndpoint, DefaultsToTheRouteToTheFirstDevice) {
  auto e = ChooseReplyEndpoint("", "127.0.0.1:7000", "d0");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->listen_host, "127.0.0.1");
  EXPECT_EQ(e->advertise_host, "127.0.0.1");
  EXPECT_EQ(e->port, 0);
}

TEST(ChooseReplyEndpoint, AdvertiseKeepsTheNameAndPort) {
  auto e = ChooseReplyEndpoint("localhost:7555", "127.0.0.1:7000", "d0");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->advertise_host, "localhost");
  EXPECT_EQ(e->port, 7555);
  auto bad = ChooseReplyEndpoint("localhost:x", "127.0.0.1:7000", "d0");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--advertise"), std::string::npos);
}

}  // namespace
}  // namespace shoal
