// The members serve keeps as the cluster file and DNS-SD list devices:
// added, removed and listed again, with the file's entry winning over a
// discovered worker of the same name.
#include "serve/membership.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace shoal {
namespace {

DeviceSpec Dev(const std::string& name, const std::string& address) {
  DeviceSpec d;
  d.name = name;
  d.address = address;
  return d;
}

std::string States(const std::vector<Member>& members) {
  std::string s;
  for (const auto& m : members) {
    s += (s.empty() ? "" : " ") + m.spec.name + "@" + m.spec.address + ":" +
         StateName(m.state);
  }
  return s;
}

TEST(Membership, ApplyAddsRemovesAndListsAgain) {
  std::mutex mu;
  std::vector<Member> members;
  std::vector<std::string> events, log;
  ApplyMembers({Dev("a", "10.0.0.1:7000"), Dev("b", "10.0.0.2:7000")}, "DNS-SD",
               nullptr, &members, mu, &events, &log);
  EXPECT_EQ(States(members), "a@10.0.0.1:7000:down b@10.0.0.2:7000:down");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1], "DNS-SD lists a new device b (10.0.0.2:7000)");

  events.clear();
  ApplyMembers({Dev("b", "10.0.0.2:7000")}, "DNS-SD", nullptr, &members, mu,
               &events, &log);
  EXPECT_EQ(States(members), "a@10.0.0.1:7000:removed b@10.0.0.2:7000:down");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], "device a is no longer in DNS-SD");

  // Back: down until it answers; and a worker at a new address is another
  // member.
  log.clear();
  ApplyMembers({Dev("a", "10.0.0.1:7000"), Dev("b", "10.0.0.9:7000")}, "DNS-SD",
               nullptr, &members, mu, &events, &log);
  EXPECT_EQ(States(members),
            "a@10.0.0.1:7000:down b@10.0.0.2:7000:removed "
            "b@10.0.0.9:7000:down");
}

TEST(Membership, ReloadJoinsTheFileAndTheWorkersFoundTheFileWinning) {
  const std::string file = ::testing::TempDir() + "/membership-" +
                           std::to_string(::getpid()) + ".yaml";
  std::ofstream(file) << "devices:\n"
                         "  - {name: a, address: 127.0.0.1:7001}\n";
  std::mutex mu;
  std::vector<Member> members;
  std::vector<std::string> events, log;
  std::vector<DeviceSpec> found = {Dev("a", "10.0.0.1:7000"),
                                   Dev("found", "10.0.0.3:7000")};
  ReloadMembers(file, &found, nullptr, &members, mu, &events, &log);
  EXPECT_EQ(States(members), "a@127.0.0.1:7001:down found@10.0.0.3:7000:down");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1],
            file + " or DNS-SD lists a new device found (10.0.0.3:7000)");

  // The worker no longer announces itself: it goes, the file's stays.
  found.clear();
  ReloadMembers(file, &found, nullptr, &members, mu, &events, &log);
  EXPECT_EQ(States(members),
            "a@127.0.0.1:7001:down found@10.0.0.3:7000:removed");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(),
            "device found is no longer in " + file + " or DNS-SD");

  // An unreadable file keeps the members as they are.
  std::filesystem::remove(file);
  ReloadMembers(file, nullptr, nullptr, &members, mu, &events, &log);
  EXPECT_EQ(States(members),
            "a@127.0.0.1:7001:down found@10.0.0.3:7000:removed");
  EXPECT_EQ(log.back().rfind("cannot re-read " + file, 0), 0u) << log.back();
}

}  // namespace
}  // namespace shoal
