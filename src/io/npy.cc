#include "io/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "graph/shape_check.h"

namespace shoal {

namespace {

// Where the value of `key` ('descr', quoted as numpy writes it) begins in
// the header's dict: past the key, blanks, ':' and blanks; npos if absent.
// A scan, not std::regex, whose backtracking recurses once per character
// (a header of 60 000 blanks overflowed the stack).
size_t ValueOf(const std::string& dict, const std::string& key) {
  const size_t k = dict.find("'" + key + "'");
  if (k == std::string::npos) return k;
  size_t i = dict.find_first_not_of(" \t", k + key.size() + 2);
  if (i == std::string::npos || dict[i] != ':') return std::string::npos;
  return dict.find_first_not_of(" \t", i + 1);
}

}  // namespace

StatusOr<NpyHeader> ParseNpyHeader(const std::string& dict) {
  NpyHeader h;
  size_t v = ValueOf(dict, "descr");
  const size_t descr_end = v == std::string::npos ? v : dict.find('\'', v + 1);
  if (v == std::string::npos || dict[v] != '\'' ||
      descr_end == std::string::npos)
    return InvalidArgument("no 'descr' in header");
  h.descr = dict.substr(v + 1, descr_end - v - 1);
  v = ValueOf(dict, "fortran_order");
  if (v != std::string::npos && dict.compare(v, 4, "True") == 0) {
    h.fortran_order = true;
  } else if (v != std::string::npos && dict.compare(v, 5, "False") == 0) {
    h.fortran_order = false;
  } else {
    return InvalidArgument("no 'fortran_order' in header");
  }
  v = ValueOf(dict, "shape");
  const size_t shape_end = v == std::string::npos ? v : dict.find(')', v);
  if (v == std::string::npos || dict[v] != '(' ||
      shape_end == std::string::npos)
    return InvalidArgument("no 'shape' in header");
  std::string dims = dict.substr(v + 1, shape_end - v - 1);
  if (dims.size() > 1024) return InvalidArgument("oversized shape in header");
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    try {
      size_t used = 0;
      const std::string text = item.substr(b);
      long long d = std::stoll(text, &used);
      // "3abc" or "3 4" is not an extent (stoll stops at the first non-digit).
      if (text.find_first_not_of(" \t", used) != std::string::npos) {
        return InvalidArgument("bad shape '(" + dims + ")'");
      }
      if (d < 0) return InvalidArgument("negative extent in shape");
      h.shape.push_back(d);
    } catch (...) {
      return InvalidArgument("bad shape '(" + dims + ")'");
    }
  }
  return h;
}

StatusOr<Tensor> ReadNpyStream(std::istream& f, const std::string& path,
                               const Shape* want, const std::string& taker) {
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return InvalidArgument("'" + path + "' is not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2))
      return InvalidArgument("'" + path + "' is truncated");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4))
      return InvalidArgument("'" + path + "' is truncated");
    header_len =
        b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return InvalidArgument("'" + path + "' has unknown .npy version " +
                           std::to_string(major));
  }
  if (header_len > (1u << 20))
    return InvalidArgument("'" + path + "' has an oversized header");
  std::string dict(header_len, '\0');
  if (!f.read(dict.data(), header_len))
    return InvalidArgument("'" + path + "' is truncated");
  auto h = ParseNpyHeader(dict);
  if (!h.ok()) return h.status().WithContext("'" + path + "'");
  if (h->descr != "<f4" && h->descr != "=f4" && h->descr != "f4") {
    return InvalidArgument("'" + path + "' holds dtype '" + h->descr +
                           "'; shoal needs float32 ('<f4'): convert with "
                           "a.astype(numpy.float32)");
  }
  if (h->fortran_order) {
    return InvalidArgument("'" + path +
                           "' is in Fortran order; save a C-ordered array "
                           "(numpy.ascontiguousarray)");
  }
  if (want != nullptr && h->shape != *want) {
    return InvalidArgument("'" + path + "' has shape " +
                           ShapeToString(h->shape) + " but " + taker +
                           " takes " + ShapeToString(*want));
  }
  // The shape is checked against the bytes present before anything is
  // allocated by it: a 100-byte file may declare (2^62, 2^62).
  auto n = CheckedElements(h->shape, "'" + path + "'");
  if (!n.ok()) return n.status();
  const int64_t bytes = *n * static_cast<int64_t>(sizeof(float));
  const std::streamoff data_at = f.tellg();
  f.seekg(0, std::ios::end);
  const std::streamoff file_end = f.tellg();
  f.seekg(data_at);
  if (data_at < 0 || file_end < data_at || file_end - data_at < bytes) {
    return InvalidArgument(
        "'" + path + "' is truncated: shape " + ShapeToString(h->shape) +
        " needs " + std::to_string(bytes) + " data bytes but it has " +
        std::to_string(std::max<std::streamoff>(0, file_end - data_at)));
  }
  Tensor t(h->shape);
  if (!f.read(reinterpret_cast<char*>(t.data.data()), bytes)) {
    return InvalidArgument("'" + path + "': read error in the data");
  }
  return t;
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot open '" + path + "'");
  return ReadNpyStream(f, path);
}

StatusOr<Tensor> ReadNpy(const std::string& path, const Shape& want,
                         const std::string& taker) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot open '" + path + "'");
  return ReadNpyStream(f, path, &want, taker);
}

StatusOr<Tensor> ParseNpy(const std::string& bytes, const std::string& origin) {
  std::istringstream in(bytes);
  return ReadNpyStream(in, origin);
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    dict += std::to_string(t.shape[i]);
    if (t.shape.size() == 1 || i + 1 < t.shape.size()) dict += ",";
    if (i + 1 < t.shape.size()) dict += " ";
  }
  dict += "), }";
  // Pad so that magic + length + header is a multiple of 64, ending in '\n'.
  const size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return InvalidArgument("cannot write '" + path + "'");
  const uint16_t len = static_cast<uint16_t>(dict.size());
  f.write("\x93NUMPY\x01\x00", 8);
  char lb[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(lb, 2);
  f.write(dict.data(), static_cast<std::streamsize>(dict.size()));
  f.write(reinterpret_cast<const char*>(t.data.data()),
          static_cast<std::streamsize>(t.data.size() * sizeof(float)));
  if (!f) return InvalidArgument("failed writing '" + path + "'");
  return Status::Ok();
}

}  // namespace shoal
