#include "plan/region.h"

#include <algorithm>
#include <sstream>

#include "graph/shape_check.h"

namespace shoal {

Region Region::Full(const Shape& s) {
  return Region{std::vector<int64_t>(s.size(), 0), s};
}

Region Region::Slice(const Shape& s, int axis, int64_t b, int64_t e) {
  Region r = Full(s);
  r.begin[axis] = b;
  r.end[axis] = e;
  return r;
}

// A region read from a file may have begin and end of different lengths
// (CheckRegion refuses it); until then, only the axes both have are read.
Shape Region::extent() const {
  Shape e(std::min(begin.size(), end.size()));
  for (size_t i = 0; i < e.size(); ++i) e[i] = end[i] - begin[i];
  return e;
}

int64_t Region::elements() const {
  int64_t n = 1;
  for (int64_t d : extent()) n *= std::max<int64_t>(0, d);
  return n;
}

Region Region::RelativeTo(const Region& origin) const {
  Region r = *this;
  const size_t n = std::min({begin.size(), end.size(), origin.begin.size()});
  for (size_t i = 0; i < n; ++i) {
    r.begin[i] -= origin.begin[i];
    r.end[i] -= origin.begin[i];
  }
  return r;
}

std::string Region::ToString() const {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < std::min(begin.size(), end.size()); ++i) {
    if (i) os << ", ";
    os << begin[i] << ":" << end[i];
  }
  os << "]";
  return os.str();
}

std::optional<Region> Intersect(const Region& a, const Region& b) {
  if (a.rank() != b.rank() || a.end.size() != a.begin.size() ||
      b.end.size() != b.begin.size()) {
    return std::nullopt;
  }
  Region r = a;
  for (int i = 0; i < a.rank(); ++i) {
    r.begin[i] = std::max(a.begin[i], b.begin[i]);
    r.end[i] = std::min(a.end[i], b.end[i]);
    if (r.begin[i] >= r.end[i]) return std::nullopt;
  }
  return r;
}

bool Contains(const Region& outer, const Region& inner) {
  if (outer.rank() != inner.rank() || outer.end.size() != outer.begin.size() ||
      inner.end.size() != inner.begin.size()) {
    return false;
  }
  for (int i = 0; i < outer.rank(); ++i) {
    if (inner.begin[i] < outer.begin[i] || inner.end[i] > outer.end[i]) {
      return false;
    }
  }
  return true;
}

Status CheckRegion(const Region& r, const Shape& s, const std::string& what) {
  if (r.begin.size() != r.end.size()) {
    return InvalidArgument(what + ": region has " +
                           std::to_string(r.begin.size()) + " begin and " +
                           std::to_string(r.end.size()) + " end coordinates");
  }
  if (r.begin.size() != s.size() || r.end.size() != s.size()) {
    return InvalidArgument(what + ": region " + r.ToString() + " has rank " +
                           std::to_string(r.begin.size()) + " but the tensor " +
                           ShapeToString(s) + " has rank " +
                           std::to_string(s.size()));
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (r.begin[i] < 0 || r.end[i] > s[i] || r.begin[i] >= r.end[i]) {
      return InvalidArgument(what + ": region " + r.ToString() +
                             " is empty or outside the tensor " +
                             ShapeToString(s));
    }
  }
  return Status::Ok();
}

namespace {

// CopyRegion of `src`'s elements read in the shape `src_shape` (its own, or
// a view of as many elements).
Status CopyBox(const Tensor& src, const Shape& src_shape,
               const Region& src_region, Tensor* dst, const Region& dst_region,
               Merge merge) {
  RETURN_IF_ERROR(CheckRegion(src_region, src_shape, "source"));
  RETURN_IF_ERROR(CheckRegion(dst_region, dst->shape, "destination"));
  if (src_region.extent() != dst_region.extent()) {
    return InvalidArgument("region extents differ: " + src_region.ToString() +
                           " vs " + dst_region.ToString());
  }
  const int rank = src_region.rank();
  if (rank == 0) {
    if (merge == Merge::kSum)
      dst->data[0] += src.data[0];
    else
      dst->data[0] = src.data[0];
    return Status::Ok();
  }
  const Shape ext = src_region.extent();
  const auto ss = Strides(src_shape), ds = Strides(dst->shape);
  const int64_t inner = ext[rank - 1];
  // Walk every row (all axes but the last) with an odometer.
  std::vector<int64_t> idx(rank - 1, 0);
  const int64_t rows = NumElements(ext) / inner;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t so = src_region.begin[rank - 1], doff = dst_region.begin[rank - 1];
    for (int i = 0; i < rank - 1; ++i) {
      so += (src_region.begin[i] + idx[i]) * ss[i];
      doff += (dst_region.begin[i] + idx[i]) * ds[i];
    }
    const float* s = src.data.data() + so;
    float* d = dst->data.data() + doff;
    if (merge == Merge::kSum) {
      for (int64_t k = 0; k < inner; ++k) d[k] += s[k];
    } else {
      std::copy(s, s + inner, d);
    }
    for (int i = rank - 2; i >= 0; --i) {
      if (++idx[i] < ext[i]) break;
      idx[i] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace

Status CopyRegion(const Tensor& src, const Region& src_region, Tensor* dst,
                  const Region& dst_region, Merge merge) {
  return CopyBox(src, src.shape, src_region, dst, dst_region, merge);
}

StatusOr<Tensor> ExtractRegion(const Tensor& src, const Region& region) {
  return ExtractRegionOfView(src, src.shape, region);
}

StatusOr<Tensor> ExtractRegionOfView(const Tensor& src, const Shape& view,
                                     const Region& region) {
  // A view from a file is checked for overflow before it is compared.
  auto viewed = CheckedElements(view, "view");
  if (!viewed.ok() || viewed.value() != NumElements(src.shape)) {
    return InvalidArgument("a tensor of shape " + ShapeToString(src.shape) +
                           " cannot be read as " + ShapeToString(view));
  }
  // Checked before the result is allocated by the region's extent.
  RETURN_IF_ERROR(CheckRegion(region, view, "source"));
  Tensor out(region.extent());
  RETURN_IF_ERROR(
      CopyBox(src, view, region, &out, Region::Full(out.shape), Merge::kCopy));
  return out;
}

std::optional<Region> MapThroughReshape(const Region& r, const Shape& from,
                                        const Shape& to) {
  if (NumElements(from) != NumElements(to) || r.rank() != (int)from.size() ||
      r.end.size() != r.begin.size()) {
    return std::nullopt;
  }
  // The box is one contiguous run when, for some axis p, the axes before p
  // have extent 1 and the axes after p are full.
  int p = r.rank() - 1;
  while (p > 0 && r.begin[p] == 0 && r.end[p] == from[p]) --p;
  for (int i = 0; i < p; ++i) {
    if (r.end[i] - r.begin[i] != 1) return std::nullopt;
  }
  const auto fs = Strides(from);
  int64_t start = 0;
  for (int i = 0; i < r.rank(); ++i) start += r.begin[i] * fs[i];
  const int64_t count = r.elements();
  // The run as a box of `to`: the first axis a whose stride divides the run
  // and within whose extent the run fits.
  const auto ts = Strides(to);
  for (size_t a = 0; a < to.size(); ++a) {
    if (start % ts[a] != 0 || count % ts[a] != 0) continue;
    const int64_t b = (start / ts[a]) % to[a];
    const int64_t n = count / ts[a];
    if (b + n > to[a]) continue;
    Region box = Region::Full(to);
    int64_t rest = start;
    for (size_t i = 0; i < a; ++i) {
      box.begin[i] = rest / ts[i];
      rest %= ts[i];
      box.end[i] = box.begin[i] + 1;
    }
    box.begin[a] = b;
    box.end[a] = b + n;
    return box;
  }
  return std::nullopt;
}

}  // namespace shoal
