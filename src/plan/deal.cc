#include "plan/deal.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shoal {

std::vector<int> DealInProportion(const std::vector<int>& devices,
                                  const std::vector<double>& weights,
                                  int max_len) {
  const size_t n = std::min(devices.size(), weights.size());
  if (n < 2) return devices;
  double total = 0, least = 0;
  for (size_t i = 0; i < n; ++i) {
    const double w = std::max(weights[i], 0.0);
    total += w;
    if (w > 0 && (least == 0 || w < least)) least = w;
  }
  if (total <= 0) return devices;
  // The list is long enough for the slowest to get one turn, no longer
  // than max_len (then the slowest round up to one turn each).
  const double len = std::clamp(std::round(total / least), double(n),
                                std::max<double>(max_len, n));
  std::vector<int> turns(n);
  int g = 0;
  for (size_t i = 0; i < n; ++i) {
    const double w = std::max(weights[i], 0.0);
    turns[i] = std::max(1, static_cast<int>(std::lround(w / total * len)));
    g = std::gcd(g, turns[i]);
  }
  int sum = 0;
  for (int& t : turns) sum += (t /= g);
  // Smooth weighted round robin: each step every device gains its turns,
  // the one furthest ahead is dealt the request and pays back the sum.
  std::vector<int> credit(n, 0), out;
  out.reserve(sum);
  for (int k = 0; k < sum; ++k) {
    size_t best = 0;
    for (size_t i = 0; i < n; ++i) {
      credit[i] += turns[i];
      if (credit[i] > credit[best]) best = i;
    }
    credit[best] -= sum;
    out.push_back(devices[best]);
  }
  return out;
}

}  // namespace shoal
