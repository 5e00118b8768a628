#include "io/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

namespace shoal {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/shoal_npy_" + name;
}

TEST(NpyTest, RoundTrip) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (Shape s : {Shape{1, 3, 4, 5}, Shape{7}, Shape{2, 1000}}) {
    Tensor t(s);
    for (auto& v : t.data) v = d(rng);
    std::string p = TempPath("rt.npy");
    ASSERT_TRUE(WriteNpy(p, t).ok());
    auto r = ReadNpy(p);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->shape, s);
    EXPECT_EQ(r->data, t.data);
  }
}

TEST(NpyTest, NumpyReadsWhatWeWriteAndWeReadNumpy) {
  Tensor t({2, 3});
  for (int i = 0; i < 6; ++i) t.data[i] = static_cast<float>(i) * 0.5f;
  std::string ours = TempPath("ours.npy"), theirs = TempPath("theirs.npy");
  ASSERT_TRUE(WriteNpy(ours, t).ok());
  std::string cmd =
      "/usr/bin/python3 -c \"import numpy as np; a=np.load('" + ours +
      "'); assert a.dtype==np.float32 and a.shape==(2,3) and a[1,2]==2.5; "
      "np.save('" +
      theirs +
      "', (np.arange(24, dtype=np.float32)"
      ".reshape(2,3,4)*2))\"";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto r = ReadNpy(theirs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape, (Shape{2, 3, 4}));
  EXPECT_EQ(r->data[23], 46.f);
}

TEST(NpyTest, RejectsWrongDtypeOrderAndTruncation) {
  std::string f64 = TempPath("f64.npy"), fo = TempPath("fo.npy");
  std::string cmd =
      "/usr/bin/python3 -c \"import numpy as np; np.save('" + f64 +
      "', np.zeros((2,2))); np.save('" + fo +
      "', np.asfortranarray(np.zeros((2,3), dtype=np.float32)))\"";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto a = ReadNpy(f64);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("<f8"), std::string::npos);
  auto b = ReadNpy(fo);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("Fortran"), std::string::npos);

  Tensor t({10, 10});
  std::string p = TempPath("trunc.npy");
  ASSERT_TRUE(WriteNpy(p, t).ok());
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(p, std::ios::binary) << bytes.substr(0, bytes.size() - 10);
  auto c = ReadNpy(p);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("truncated"), std::string::npos);
  EXPECT_FALSE(ReadNpy(TempPath("missing.npy")).ok());
  std::ofstream(TempPath("junk.npy")) << "hello world";
  EXPECT_FALSE(ReadNpy(TempPath("junk.npy")).ok());
}

// A header that claims more data than the file holds is refused before
// anything is allocated by it, overflowing shapes included.
TEST(NpyTest, ShapeIsCheckedAgainstTheBytesPresent) {
  auto npy = [](const std::string& shape, size_t data_bytes) {
    std::string dict =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
    dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
    dict += '\n';
    std::string f = std::string("\x93NUMPY\x01\x00", 8);
    f += static_cast<char>(dict.size() & 0xff);
    f += static_cast<char>(dict.size() >> 8);
    return f + dict + std::string(data_bytes, '\0');
  };
  auto ok = ParseNpy(npy("2, 3", 24), "ok");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->shape, (Shape{2, 3}));
  for (const char* shape :
       {"4611686018427387904, 4611686018427387904", "1000000000, 1000000000",
        "68719476736,", "100000, 100000"}) {
    auto r = ParseNpy(npy(shape, 16), "h.npy");
    ASSERT_FALSE(r.ok()) << shape;
    EXPECT_NE(r.status().message().find("h.npy"), std::string::npos);
  }
  auto short_data = ParseNpy(npy("2, 3", 20), "s.npy");
  ASSERT_FALSE(short_data.ok());
  EXPECT_NE(short_data.status().message().find("needs 24 data bytes but it "
                                               "has 20"),
            std::string::npos)
      << short_data.status().message();
  EXPECT_FALSE(ParseNpy(npy("99999999999999999999999", 0), "x").ok());
  // A zero extent beside huge ones is an empty array, counted without an
  // overflowing product (fuzz_npy found this under UBSan).
  auto empty = ParseNpy(npy("3, 333333333333333, 4000000000000, 0", 0), "z");
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_TRUE(empty->data.empty());
  EXPECT_FALSE(ParseNpy(npy("3abc", 12), "x").ok());
}

// Headers a hostile file may hold: 60 000 blanks inside the shape (which
// overflowed the stack in std::regex), keys in another order, missing
// values. Each is an error naming what is wrong, or read as numpy would.
TEST(NpyTest, HostileHeadersAreErrorsNotCrashes) {
  auto header = [](const std::string& dict) {
    std::string d = dict;
    d.append((64 - (10 + d.size() + 1) % 64) % 64, ' ');
    d += '\n';
    std::string f = std::string("\x93NUMPY\x02\x00", 8);
    for (int i = 0; i < 4; ++i)
      f += static_cast<char>((d.size() >> (8 * i)) & 0xff);
    return f + d;
  };
  auto spaces =
      ParseNpy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1," +
                      std::string(60000, ' ') + "1), }") +
                   std::string(4, '\0'),
               "spaces.npy");
  ASSERT_FALSE(spaces.ok());
  EXPECT_NE(spaces.status().message().find("spaces.npy"), std::string::npos);
  auto reordered = ParseNpy(
      header("{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}") +
          std::string(8, '\0'),
      "r.npy");
  ASSERT_TRUE(reordered.ok()) << reordered.status().message();
  EXPECT_EQ(reordered->shape, (Shape{2}));
  for (const char* dict :
       {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,}",
        "{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': }"}) {
    EXPECT_FALSE(ParseNpy(header(dict) + std::string(8, '\0'), "b.npy").ok())
        << dict;
  }
}

}  // namespace
}  // namespace shoal
