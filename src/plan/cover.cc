#include "plan/cover.h"

#include <algorithm>

#include "graph/shape_check.h"

namespace shoal {

StatusOr<CoverResult> CheckCover(const Shape& shape,
                                 const std::vector<Region>& boxes,
                                 bool exclusive) {
  const int rank = static_cast<int>(shape.size());
  // Per axis, the sorted distinct edges; cell k of axis a is
  // [edges[a][k], edges[a][k + 1]).
  std::vector<std::vector<int64_t>> edges(rank);
  int64_t cells = 1;
  for (int a = 0; a < rank; ++a) {
    auto& e = edges[a];
    e = {0, shape[a]};
    for (const Region& b : boxes) {
      e.push_back(b.begin[a]);
      e.push_back(b.end[a]);
    }
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
    if (!MulWithin(cells, static_cast<int64_t>(e.size()) - 1, kMaxCoverCells,
                   &cells)) {
      return InvalidArgument("its parts cut it into more than 2^26 pieces");
    }
  }
  std::vector<uint8_t> count(cells, 0);
  // Row-major strides of the cell grid.
  std::vector<int64_t> stride(rank, 1);
  for (int a = rank - 1; a > 0; --a) {
    stride[a - 1] = stride[a] * (static_cast<int64_t>(edges[a].size()) - 1);
  }
  auto index_of = [&](int a, int64_t coord) {
    return std::lower_bound(edges[a].begin(), edges[a].end(), coord) -
           edges[a].begin();
  };
  auto element_of = [&](int64_t cell) {
    std::vector<int64_t> at(rank);
    for (int a = 0; a < rank; ++a) {
      at[a] = edges[a][cell / stride[a]];
      cell %= stride[a];
    }
    return at;
  };
  int64_t visits = 0;
  std::vector<int64_t> lo(rank), hi(rank), idx(rank);
  for (const Region& b : boxes) {
    int64_t n = 1;
    for (int a = 0; a < rank; ++a) {
      lo[a] = index_of(a, b.begin[a]);
      hi[a] = index_of(a, b.end[a]);
      n *= hi[a] - lo[a];  // <= cells, so no overflow
    }
    if (n == 0) continue;
    visits += n;
    if (visits > kMaxCoverVisits) {
      return InvalidArgument(
          "its parts overlap so much that checking them would take more "
          "than 2^28 steps");
    }
    idx = lo;
    for (int64_t k = 0; k < n; ++k) {
      int64_t cell = 0;
      for (int a = 0; a < rank; ++a) cell += idx[a] * stride[a];
      if (count[cell] == 1 && exclusive) {
        return CoverResult{CoverOutcome::kOverlap, element_of(cell)};
      }
      count[cell] = 1;
      for (int a = rank - 1; a >= 0; --a) {
        if (++idx[a] < hi[a]) break;
        idx[a] = lo[a];
      }
    }
  }
  for (int64_t c = 0; c < cells; ++c) {
    if (count[c] == 0) return CoverResult{CoverOutcome::kGap, element_of(c)};
  }
  return CoverResult{};
}

}  // namespace shoal
