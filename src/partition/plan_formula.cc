#include "partition/plan_formula.h"

#include <map>

#include "partition/model_chain.h"
#include "partition/paper_cost.h"
#include "partition/scheme.h"
#include "partition/strategy.h"

namespace shoal {

StatusOr<int64_t> FormulaCommunication(const Plan& p, const Graph& model) {
  std::map<std::string, Scheme> by_layer;
  for (const auto& d : p.decisions) {
    ASSIGN_OR_RETURN(Scheme s, ParseScheme(d.scheme));
    if (s == Scheme::kChannel) s = Scheme::kLop;
    if (s == Scheme::kFilter) s = Scheme::kLip;
    if (s != Scheme::kWhole && s != Scheme::kLop && s != Scheme::kLip &&
        s != Scheme::kFuse1 && s != Scheme::kFuse2) {
      return Unsupported(
          "the paper's formula covers lop, lip and fused "
          "layers, not " +
          d.scheme);
    }
    by_layer[d.layer] = s;
  }
  if (p.input_device != p.output_device) {
    return Unsupported("the paper's formula assumes one source device");
  }
  // It also splits every layer over every device and runs the rest on the
  // source (auto may place and split otherwise).
  std::map<std::string, int> parts;
  for (const auto& t : p.tasks) {
    if (t.scheme == "reduce") {
      return Unsupported(
          "the paper's formula sums partial sums on the source device; this "
          "plan reduces them among the devices that hold them (--reduce "
          "peers)");
    }
    if (!t.layer.empty()) ++parts[t.layer];
    if (t.layer.empty() && p.DeviceOf(t.id, 0) != p.input_device) {
      return Unsupported(
          "the paper's formula runs whole layers on the "
          "source device, not on " +
          p.devices[p.DeviceOf(t.id, 0)].name);
    }
  }
  for (const auto& [layer, n] : parts) {
    if (n != static_cast<int>(p.devices.size())) {
      return Unsupported("layer " + layer + " is split over " +
                         std::to_string(n) + " of the " +
                         std::to_string(p.devices.size()) + " devices");
    }
  }
  ASSIGN_OR_RETURN(std::vector<ChainLayer> chain, ModelChain(model));
  std::vector<Scheme> schemes;
  for (const auto& l : chain) {
    auto it = by_layer.find(l.name);
    schemes.push_back(it == by_layer.end() ? Scheme::kWhole : it->second);
  }
  const std::vector<double> shares = NormalizedShares(p.devices);
  ASSIGN_OR_RETURN(ChainCost c,
                   EvaluateChain(chain, schemes, shares, p.input_device));
  return c.communication;
}

}  // namespace shoal
