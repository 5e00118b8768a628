#include "runtime/blob_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/wire.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

Tensor Ramp(int64_t n) {
  Tensor t(Shape{n});
  for (int64_t i = 0; i < n; ++i) t.data[i] = 0.5f * i - 7;
  return t;
}

std::string Bytes(const Tensor& t) {
  std::string s;
  TensorToBytes(t, &s);
  return s;
}

// Puts a blob through a Writer in uneven pieces; its hash.
std::string Put(BlobCache* c, const std::string& bytes) {
  const std::string h = HashString(bytes);
  auto w = c->Begin(h, bytes.size());
  EXPECT_TRUE(w.ok()) << w.status().message();
  for (size_t off = 0; off < bytes.size(); off += 1000) {
    EXPECT_TRUE((*w)->Append(bytes.substr(off, 1000)).ok());
  }
  EXPECT_TRUE((*w)->Commit().ok());
  return h;
}

TEST(ContentHasher, PiecesHashAsTheWhole) {
  std::string s;
  for (int i = 0; i < 1003; ++i) s.push_back(static_cast<char>(i * 7));
  for (size_t piece : {1, 3, 7, 8, 9, 100, 1003}) {
    ContentHasher h;
    for (size_t off = 0; off < s.size(); off += piece) {
      const std::string p = s.substr(off, piece);
      h.Add(p.data(), p.size());
    }
    EXPECT_EQ(h.Hex(), HashString(s)) << piece;
  }
}

TEST(BlobCache, Int8BlobsReadBackAsFloats) {
  auto c = BlobCache::Open("");
  ASSERT_TRUE(c.ok());
  std::string bytes;
  for (int i = 0; i < 301; ++i)
    bytes.push_back(static_cast<char>(static_cast<int8_t>(i % 256 - 128)));
  const std::string h = Put(c->get(), bytes);
  EXPECT_EQ((*c)->Size(h), 301);
  auto back = (*c)->Read(h, Shape{7, 43}, /*int8=*/true);
  ASSERT_TRUE(back.ok()) << back.status().message();
  for (int i = 0; i < 301; ++i) EXPECT_EQ(back->data[i], i % 256 - 128) << i;
  // As float32 the size does not fit.
  EXPECT_FALSE((*c)->Read(h, Shape{7, 43}).ok());
}

TEST(BlobCache, WrittenBlobsReadBack) {
  auto c = BlobCache::Open("");
  ASSERT_TRUE(c.ok());
  const Tensor t = Ramp(2501);
  const std::string h = Put(c->get(), Bytes(t));
  EXPECT_TRUE((*c)->Has(h));
  EXPECT_EQ((*c)->Size(h), 2501 * 4);
  auto back = (*c)->Read(h, Shape{41, 61});
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->data, t.data);
  EXPECT_FALSE((*c)->Read(h, Shape{2500}).ok()) << "a shape of another size";
  const std::string dir = (*c)->dir();
  c->reset();
  EXPECT_FALSE(fs::exists(dir)) << "a temporary cache goes with its owner";
}

// A directory it cannot write (here /proc/1, which no one, root included,
// creates files in) is refused when the cache opens, naming it: a worker
// fails at start, not at its first deploy.
TEST(BlobCache, ADirectoryItCannotWriteIsRefusedAtOnce) {
  auto c = BlobCache::Open("/proc/1");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cannot write to the weight cache "
                                      "/proc/1"),
            std::string::npos)
      << c.status().message();
}

TEST(BlobCache, ADirectoryOutlivesItsCache) {
  const std::string dir =
      ::testing::TempDir() + "/blobs-" + std::to_string(getpid());
  std::string h;
  {
    auto c = BlobCache::Open(dir);
    ASSERT_TRUE(c.ok());
    h = Put(c->get(), Bytes(Ramp(64)));
  }
  auto c = BlobCache::Open(dir);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE((*c)->Has(h));
  fs::remove_all(dir);
}

TEST(BlobCache, CorruptFilesAreRemovedNotUsed) {
  auto c = BlobCache::Open("");
  ASSERT_TRUE(c.ok());
  const std::string a = Put(c->get(), Bytes(Ramp(300)));
  const std::string b = Put(c->get(), Bytes(Ramp(301)));
  ASSERT_TRUE((*c)->Has(a));  // verified once, remembered by size and time
  for (const std::string& h : {a, b}) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::fstream f((*c)->dir() + "/" + h,
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(17);
    f.put('\x55');
  }
  EXPECT_FALSE((*c)->Has(a));
  EXPECT_FALSE(fs::exists((*c)->dir() + "/" + a));
  auto r = (*c)->Read(b, Shape{301});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("corrupt"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(fs::exists((*c)->dir() + "/" + b));
}

TEST(BlobCache, BadUploadsLeaveNothing) {
  auto c = BlobCache::Open("");
  ASSERT_TRUE(c.ok());
  const std::string bytes = Bytes(Ramp(100));
  const std::string h = HashString(bytes);
  {
    auto w = (*c)->Begin(h, bytes.size());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(bytes.substr(0, 396) + "xxxx").ok());
    EXPECT_FALSE((*w)->Commit().ok()) << "content that does not hash";
  }
  {
    auto w = (*c)->Begin(h, bytes.size());
    ASSERT_TRUE(w.ok());
    EXPECT_FALSE((*w)->Append(bytes + "x").ok()) << "longer than announced";
  }
  {
    auto w = (*c)->Begin(h, bytes.size());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(bytes.substr(0, 8)).ok());
  }  // dropped half way
  EXPECT_FALSE((*c)->Has(h));
  EXPECT_TRUE(fs::is_empty((*c)->dir()));
  for (const char* bad : {"../../etc/passwd", "", "ABCDEF", "x"}) {
    EXPECT_FALSE((*c)->Begin(bad, 4).ok()) << bad;
    EXPECT_FALSE((*c)->Has(bad)) << bad;
  }
}

TEST(BlobCache, TrimKeepsWhatIsUsedAndTheNewest) {
  auto c = BlobCache::Open("");
  ASSERT_TRUE(c.ok());
  std::vector<std::string> h;
  for (int i = 0; i < 4; ++i) {
    h.push_back(Put(c->get(), Bytes(Ramp(256 + i))));  // ~1 KiB each
    // Last used a second apart, oldest first.
    const timespec t[2] = {{time(nullptr) - 10 + i, 0}, {0, UTIME_OMIT}};
    ASSERT_EQ(utimensat(AT_FDCWD, ((*c)->dir() + "/" + h.back()).c_str(), t, 0),
              0);
  }
  (*c)->Trim({h[0]}, 2100);
  EXPECT_GT((*c)->Size(h[0]), 0) << "kept: in use";
  EXPECT_LT((*c)->Size(h[1]), 0) << "the oldest unused";
  EXPECT_LT((*c)->Size(h[2]), 0);
  EXPECT_GT((*c)->Size(h[3]), 0) << "the newest fits";
}

}  // namespace
}  // namespace shoal
