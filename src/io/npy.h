// The numpy .npy format (versions 1-3): float32 arrays in C order are read
// and written; anything else is refused with a message saying what it is.
#ifndef SHOAL_IO_NPY_H_
#define SHOAL_IO_NPY_H_

#include <istream>
#include <string>

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

StatusOr<Tensor> ReadNpy(const std::string& path);
// Only an array of shape `want`, `taker` naming who wants it in the error:
// a file of another shape is refused from its header, before its data is
// read (a 1.6 GB file of the wrong shape was read whole first).
StatusOr<Tensor> ReadNpy(const std::string& path, const Shape& want,
                         const std::string& taker);
// The same from a stream or from the file's bytes; `path` / `origin` names
// it in errors.
StatusOr<Tensor> ReadNpyStream(std::istream& in, const std::string& path,
                               const Shape* want = nullptr,
                               const std::string& taker = "");
StatusOr<Tensor> ParseNpy(const std::string& bytes, const std::string& origin);
Status WriteNpy(const std::string& path, const Tensor& t);

// Parses the header dict of an .npy file (exposed for tests).
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};
StatusOr<NpyHeader> ParseNpyHeader(const std::string& dict);

}  // namespace shoal

#endif  // SHOAL_IO_NPY_H_
