// The IDX reader and the Fashion-MNIST loader: good files, and every kind of
// bad one ending in an error that names the file.
#include "train/idx_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "onnx/onnx_test_util.h"
#include "train/fashion_mnist.h"
#include "train/train_test_util.h"

namespace shoal {
namespace {

using onnx_test::TempDir;
using train_test::IdxBytes;
using train_test::WriteGz;

void ExpectErrorNames(const Status& s, const std::string& file,
                      const std::string& what) {
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(file), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(what), std::string::npos) << s.ToString();
}

TEST(IdxFile, ReadsGzippedAndPlainFiles) {
  TempDir dir;
  const std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6};
  const std::string gz = dir.File("a.gz"), plain = dir.File("a.idx");
  ASSERT_TRUE(WriteGz(gz, IdxBytes({2, 3}, data)));
  std::ofstream(plain, std::ios::binary) << IdxBytes({2, 3}, data);
  for (const auto& path : {gz, plain}) {
    auto a = ReadIdxFile(path, 2);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a->data, data);
  }
}

TEST(IdxFile, BadMagicNamesFile) {
  TempDir dir;
  const std::string p = dir.File("bad_magic.gz");
  std::string bytes = IdxBytes({4}, {0, 1, 2, 3});
  bytes[2] = 0x0D;  // float IDX, not unsigned byte
  ASSERT_TRUE(WriteGz(p, bytes));
  ExpectErrorNames(ReadIdxFile(p, 1).status(), "bad_magic.gz", "bad magic");
}

TEST(IdxFile, WrongRankNamesFile) {
  TempDir dir;
  const std::string p = dir.File("rank.gz");
  ASSERT_TRUE(WriteGz(p, IdxBytes({2, 2}, {0, 1, 2, 3})));
  ExpectErrorNames(ReadIdxFile(p, 3).status(), "rank.gz",
                   "2 dimensions, expected 3");
}

TEST(IdxFile, TruncatedDataNamesFile) {
  TempDir dir;
  const std::string p = dir.File("short.gz");
  ASSERT_TRUE(WriteGz(p, IdxBytes({10, 28, 28}, std::vector<uint8_t>(700))));
  ExpectErrorNames(ReadIdxFile(p, 3).status(), "short.gz", "truncated");
}

TEST(IdxFile, TruncatedGzipStreamNamesFile) {
  TempDir dir;
  const std::string full = dir.File("full.gz"), cut = dir.File("cut.gz");
  ASSERT_TRUE(WriteGz(full, IdxBytes({1000}, std::vector<uint8_t>(1000, 7))));
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  ExpectErrorNames(ReadIdxFile(cut, 1).status(), "cut.gz", "cut.gz");
}

TEST(IdxFile, MissingAndEmptyFilesNamed) {
  TempDir dir;
  ExpectErrorNames(ReadIdxFile(dir.File("nope.gz"), 1).status(), "nope.gz",
                   "does not exist");
  const std::string empty = dir.File("empty.gz");
  std::ofstream(empty).close();
  ExpectErrorNames(ReadIdxFile(empty, 1).status(), "empty.gz", "magic");
}

TEST(FashionMnist, LoadsADirectory) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 30, 20));
  auto d = LoadFashionMnist(dir.path());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->train.count, 30);
  EXPECT_EQ(d->test.count, 20);
  EXPECT_EQ(d->train.rows, 28);
  EXPECT_EQ(d->test.labels[13], 3);
}

TEST(FashionMnist, MissingDirectoryAndFilesNamed) {
  TempDir dir;
  ExpectErrorNames(LoadFashionMnist(dir.File("absent")).status(), "absent",
                   "does not exist");
  ExpectErrorNames(LoadFashionMnist(dir.path()).status(),
                   "train-images-idx3-ubyte.gz", "does not exist");
}

TEST(FashionMnist, LabelCountAndRangeChecked) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 30, 20));
  const std::string labels = dir.File("t10k-labels-idx1-ubyte.gz");
  ASSERT_TRUE(WriteGz(labels, IdxBytes({19}, std::vector<uint8_t>(19))));
  ExpectErrorNames(LoadFashionMnist(dir.path()).status(),
                   "t10k-labels-idx1-ubyte.gz", "19 labels");
  std::vector<uint8_t> lb(20, 1);
  lb[5] = 10;
  ASSERT_TRUE(WriteGz(labels, IdxBytes({20}, lb)));
  ExpectErrorNames(LoadFashionMnist(dir.path()).status(),
                   "t10k-labels-idx1-ubyte.gz", "label 10 at index 5");
}

}  // namespace
}  // namespace shoal
