#include "util/read_file.h"

#include <gtest/gtest.h>

#include <fstream>

namespace shoal {
namespace {

// /dev/zero as a cluster's CA was read until memory ran out; a file over
// the limit is refused from its size, a missing one named.
TEST(ReadBoundedFile, OnlyRegularFilesWithinTheLimit) {
  const std::string path = ::testing::TempDir() + "/shoal_read_file.txt";
  std::ofstream(path) << "0123456789";
  auto ok = ReadBoundedFile(path, 10, "test file");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, "0123456789");

  auto big = ReadBoundedFile(path, 9, "test file");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("test file " + path), std::string::npos)
      << big.status().message();

  for (const char* special : {"/dev/zero", "/dev/urandom", "/proc/self"}) {
    auto r = ReadBoundedFile(special, 1 << 20, "TLS CA");
    ASSERT_FALSE(r.ok()) << special;
    EXPECT_NE(r.status().message().find("not a regular file"),
              std::string::npos)
        << r.status().message();
  }
  auto missing = ReadBoundedFile(path + ".missing", 10, "key");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace shoal
