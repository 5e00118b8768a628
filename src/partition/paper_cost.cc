#include "partition/paper_cost.h"

#include <algorithm>
#include <string>

#include "partition/split_counts.h"

namespace shoal {
namespace {

std::string Label(const ChainLayer& layer, size_t index) {
  return "layer " + std::to_string(index) + " '" + layer.name + "'";
}

// Splits `total` elements made of `units` equal units (0: elements) into
// device parts in elements.
StatusOr<std::vector<int64_t>> SplitElements(int64_t total, int64_t units,
                                             const std::vector<double>& shares,
                                             const char* what) {
  const int64_t n = units > 0 ? units : total;
  auto counts = SplitCounts(n, shares);
  if (!counts.ok()) {
    return InvalidArgument("cannot split its " + std::to_string(n) + " " +
                           what + " among " + std::to_string(shares.size()) +
                           " devices");
  }
  for (int64_t& c : *counts) c *= total / n;
  return counts;
}

bool IsSplitScheme(Scheme s) {
  return s == Scheme::kLop || s == Scheme::kLip || s == Scheme::kFuse1 ||
         s == Scheme::kFuse2;
}

bool SplitsOutput(Scheme s) { return s == Scheme::kLop || s == Scheme::kFuse1; }

}  // namespace

int64_t Portion(int64_t x, int64_t part, int64_t whole) {
  return static_cast<int64_t>(static_cast<__int128>(x) * part / whole);
}

Status ValidateHub(int hub, const std::vector<double>& shares) {
  if (hub < 0 || hub >= static_cast<int>(shares.size())) {
    return InvalidArgument("hub device " + std::to_string(hub) +
                           " is not one of the " +
                           std::to_string(shares.size()) + " devices");
  }
  return Status::Ok();
}

Status ValidateChain(const std::vector<ChainLayer>& chain) {
  if (chain.empty()) return InvalidArgument("the layer chain is empty");
  for (size_t i = 0; i < chain.size(); ++i) {
    const ChainLayer& l = chain[i];
    if (l.M <= 0 || l.K <= 0 || l.Q < 0 || l.R < 0) {
      return InvalidArgument(
          Label(l, i) + " has M=" + std::to_string(l.M) +
          " K=" + std::to_string(l.K) + " Q=" + std::to_string(l.Q) +
          " R=" + std::to_string(l.R) + "; M and K must be > 0, Q and R >= 0");
    }
    if (l.m_units < 0 || l.k_units < 0 ||
        (l.m_units > 0 && l.M % l.m_units != 0) ||
        (l.k_units > 0 && l.K % l.k_units != 0)) {
      return InvalidArgument(
          Label(l, i) + ": M=" + std::to_string(l.M) +
          " and K=" + std::to_string(l.K) +
          " are not whole multiples of m_units=" + std::to_string(l.m_units) +
          " and k_units=" + std::to_string(l.k_units));
    }
    if (l.reuses_prev && i == 0) {
      return InvalidArgument(Label(l, i) +
                             " reuses a previous layer but is the first");
    }
    if (l.reuses_prev) {
      // Each of the previous layer's output units must map to a whole
      // number of this layer's input elements.
      const ChainLayer& p = chain[i - 1];
      const int64_t reused = l.reuse_elements > 0 ? l.reuse_elements : l.M;
      const int64_t units = p.k_units > 0 ? p.k_units : p.K;
      if (l.reuse_elements < 0 || reused > l.M || reused % units != 0) {
        return InvalidArgument(
            Label(l, i) + " reuses " + std::to_string(reused) + " of its " +
            std::to_string(l.M) + " input elements from the " +
            std::to_string(units) + " output units of '" + p.name +
            "'; that must be at most M and a whole number per unit");
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<LayerParts>> SplitChain(
    const std::vector<ChainLayer>& chain, const std::vector<double>& shares) {
  RETURN_IF_ERROR(ValidateChain(chain));
  RETURN_IF_ERROR(ValidateShares(shares));
  std::vector<LayerParts> parts(chain.size());
  for (size_t i = 0; i < chain.size(); ++i) {
    const ChainLayer& l = chain[i];
    auto m = SplitElements(l.M, l.m_units, shares, "input units");
    auto k = SplitElements(l.K, l.k_units, shares, "output units");
    if (m.ok()) parts[i].m = *m;
    if (k.ok()) parts[i].k = *k;
    parts[i].m_status = m.status().WithContext(Label(l, i));
    parts[i].k_status = k.status().WithContext(Label(l, i));
  }
  return parts;
}

Status CheckSchemeFits(const ChainLayer& layer, const LayerParts& parts,
                       Scheme scheme) {
  if (scheme == Scheme::kWhole) return Status::Ok();
  if (!IsSplitScheme(scheme)) {
    return InvalidArgument("layer '" + layer.name + "': scheme '" +
                           SchemeName(scheme) +
                           "' is not one of whole, lop, lip, fuse1, fuse2");
  }
  return SplitsOutput(scheme) ? parts.k_status : parts.m_status;
}

int64_t BaseCommunication(const ChainLayer& layer, const LayerParts& parts,
                          Scheme scheme, int hub) {
  const int64_t others =
      static_cast<int64_t>(std::max(parts.m.size(), parts.k.size())) - 1;
  switch (scheme) {
    case Scheme::kLop:  // whole input out, output slices back to the hub
      return layer.M * others +
             (layer.k_sent > 0
                  ? layer.k_sent - Portion(layer.k_sent, parts.k[hub], layer.K)
                  : layer.K - parts.k[hub]);
    case Scheme::kFuse1:  // outputs stay for the fused LIP
      return layer.M * others;
    case Scheme::kLip:  // input slices out, full partial sums back
      return (layer.M - parts.m[hub]) + layer.K * others;
    case Scheme::kFuse2:  // inputs already there
      return layer.K * others;
    default:
      return 0;
  }
}

int64_t ReusableElements(const ChainLayer& layer, const ChainLayer& prev,
                         const LayerParts& prev_parts, int hub) {
  if (!layer.reuses_prev) return 0;
  const int64_t reused =
      layer.reuse_elements > 0 ? layer.reuse_elements : layer.M;
  int64_t held = 0;
  for (size_t d = 0; d < prev_parts.k.size(); ++d) {
    // Exact: ValidateChain checks whole elements per unit.
    if (static_cast<int>(d) != hub) {
      held += Portion(reused, prev_parts.k[d], prev.K);
    }
  }
  return held;
}

bool Reuses(Scheme prev, Scheme scheme) {
  return prev == Scheme::kLop && SplitsOutput(scheme);
}

StatusOr<ChainCost> EvaluateChain(const std::vector<ChainLayer>& chain,
                                  const std::vector<Scheme>& schemes,
                                  const std::vector<double>& shares, int hub) {
  ASSIGN_OR_RETURN(std::vector<LayerParts> parts, SplitChain(chain, shares));
  RETURN_IF_ERROR(ValidateHub(hub, shares));
  const int n = static_cast<int>(shares.size());
  if (schemes.size() != chain.size()) {
    return InvalidArgument(std::to_string(schemes.size()) +
                           " schemes for a chain of " +
                           std::to_string(chain.size()) + " layers");
  }
  ChainCost cost;
  cost.weights_per_device.assign(n, 0);
  for (size_t i = 0; i < chain.size(); ++i) {
    const ChainLayer& l = chain[i];
    const Scheme s = schemes[i];
    RETURN_IF_ERROR(CheckSchemeFits(l, parts[i], s));
    if (s == Scheme::kFuse1 && (!l.fusable_with_next || i + 1 == chain.size() ||
                                schemes[i + 1] != Scheme::kFuse2)) {
      return InvalidArgument(Label(l, i) +
                             " is fuse1 but is not fusable with a next layer "
                             "that is fuse2");
    }
    if (s == Scheme::kFuse2 && (i == 0 || schemes[i - 1] != Scheme::kFuse1)) {
      return InvalidArgument(Label(l, i) +
                             " is fuse2 but the layer before is not fuse1");
    }
    LayerCost lc;
    lc.scheme = s;
    lc.communication = BaseCommunication(l, parts[i], s, hub);
    if (i > 0 && Reuses(schemes[i - 1], s)) {
      lc.communication -= ReusableElements(l, chain[i - 1], parts[i - 1], hub);
    }
    lc.weights.assign(n, 0);
    lc.macs.assign(n, 0);
    for (int d = 0; d < n; ++d) {
      if (s == Scheme::kWhole) {
        if (d != hub) continue;
        lc.weights[d] = l.Q;
        lc.macs[d] = l.R;
      } else if (SplitsOutput(s)) {
        lc.weights[d] = Portion(l.Q, parts[i].k[d], l.K);
        lc.macs[d] = Portion(l.R, parts[i].k[d], l.K);
      } else {
        lc.weights[d] = Portion(l.Q, parts[i].m[d], l.M);
        lc.macs[d] = Portion(l.R, parts[i].m[d], l.M);
      }
      cost.weights_per_device[d] += lc.weights[d];
    }
    cost.communication += lc.communication;
    cost.macs_longest_path += *std::max_element(lc.macs.begin(), lc.macs.end());
    cost.layers.push_back(std::move(lc));
  }
  return cost;
}

}  // namespace shoal
