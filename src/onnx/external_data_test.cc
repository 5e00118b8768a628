#include "onnx/external_data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx/onnx_tensor.h"

namespace shoal {
namespace {

onnx::TensorProto External(const std::string& offset,
                           const std::string& length) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    if (v.empty()) return;
    auto* kv = t.add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", "w.bin");
  add("offset", offset);
  add("length", length);
  return t;
}

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir();
    std::ofstream(dir_ + "/w.bin", std::ios::binary) << std::string(16, 'a');
  }
  std::string dir_;
};

TEST_F(ExternalData, ReadsARangeOfTheFile) {
  auto b = ReadExternalData(External("4", "8"), dir_);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->size(), 8u);
  auto rest = ReadExternalData(External("12", ""), dir_);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->size(), 4u);
}

// offset + length past int64 once wrapped to a small number and passed.
TEST_F(ExternalData, RefusesRangesPastTheFileWithoutOverflow) {
  for (auto [off, len] : std::vector<std::pair<std::string, std::string>>{
           {"9223372036854775807", "9223372036854775807"},
           {"8", "9223372036854775800"},
           {"17", ""},
           {"0", "17"}}) {
    auto b = ReadExternalData(External(off, len), dir_);
    ASSERT_FALSE(b.ok()) << off << " " << len;
    EXPECT_NE(b.status().message().find("tensor 'w'"), std::string::npos);
  }
  for (auto [off, len] : std::vector<std::pair<std::string, std::string>>{
           {"-1", ""}, {"4x", ""}, {"0", "99999999999999999999999"}}) {
    auto b = ReadExternalData(External(off, len), dir_);
    ASSERT_FALSE(b.ok()) << off << " " << len;
    EXPECT_NE(b.status().message().find("not a number of bytes"),
              std::string::npos)
        << b.status().message();
  }
}

// A location inside the directory that is a symbolic link out of it (to
// /etc/passwd) is refused, naming where it leads; a link that stays inside
// is read.
TEST_F(ExternalData, SymbolicLinksOutOfTheDirectoryAreRefused) {
  const std::string dir = dir_ + "/shoal_external_links";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("/etc/passwd", dir + "/w.bin");
  auto out = ReadExternalData(External("0", "4"), dir);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("outside the model's directory"),
            std::string::npos)
      << out.status().message();
  std::filesystem::remove(dir + "/w.bin");
  std::ofstream(dir + "/real.bin", std::ios::binary) << std::string(8, 'b');
  std::filesystem::create_symlink("real.bin", dir + "/w.bin");
  auto in = ReadExternalData(External("0", "8"), dir);
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(*in, std::string(8, 'b'));
  std::filesystem::remove_all(dir);
}

TEST_F(ExternalData, TensorSizeMustMatchTheBytesRead) {
  auto t = External("0", "12");  // 3 floats for a tensor of 2
  auto v = DecodeTensor(t, dir_);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("12 bytes"), std::string::npos)
      << v.status().message();
  t = External("0", "8");
  t.clear_dims();
  t.add_dims(int64_t{1} << 62);
  t.add_dims(int64_t{1} << 62);
  v = DecodeTensor(t, dir_);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("2^36"), std::string::npos);
}

}  // namespace
}  // namespace shoal
