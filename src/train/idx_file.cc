#include "train/idx_file.h"

#include <zlib.h>

#include <filesystem>
#include <memory>

namespace shoal {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

// Reads exactly n bytes; false at end of file or on a decode error.
bool ReadExactly(gzFile f, void* buf, size_t n, std::string* why) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1 << 30));
    const int got = gzread(f, p, chunk);
    if (got < 0) {
      int err = 0;
      *why = gzerror(f, &err);
      return false;
    }
    if (got == 0) {
      *why = "unexpected end of file";
      return false;
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

uint32_t BigEndian(const unsigned char b[4]) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) |
         (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

}  // namespace

StatusOr<IdxArray> ReadIdxFile(const std::string& path, int expected_rank) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return NotFound("IDX file '" + path + "' does not exist");
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  if (!f) return InvalidArgument("cannot open IDX file '" + path + "'");
  auto bad = [&](const std::string& what) {
    return InvalidArgument("IDX file '" + path + "': " + what);
  };
  std::string why;
  unsigned char magic[4];
  if (!ReadExactly(f.get(), magic, 4, &why))
    return bad("cannot read the magic number (" + why + ")");
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08) {
    char hex[16];
    snprintf(hex, sizeof hex, "0x%08x", BigEndian(magic));
    return bad(std::string("bad magic ") + hex +
               " (expected 0x0000080N: unsigned-byte IDX)");
  }
  if (magic[3] != expected_rank)
    return bad("has " + std::to_string(magic[3]) + " dimensions, expected " +
               std::to_string(expected_rank));
  IdxArray a;
  int64_t count = 1;
  for (int i = 0; i < expected_rank; ++i) {
    unsigned char d[4];
    if (!ReadExactly(f.get(), d, 4, &why))
      return bad("truncated header (" + why + ")");
    const uint32_t v = BigEndian(d);
    if (v == 0 || v > (1u << 30))
      return bad("bad dimension " + std::to_string(v));
    a.dims.push_back(v);
    count *= v;
    if (count > (int64_t{1} << 34)) return bad("dimensions too large");
  }
  a.data.resize(static_cast<size_t>(count));
  if (!ReadExactly(f.get(), a.data.data(), a.data.size(), &why))
    return bad("truncated: the header promises " + std::to_string(count) +
               " bytes of data (" + why + ")");
  return a;
}

}  // namespace shoal
