// Test helper: auto's request for `n` boards of a class (Pi 3B+ on their Wi-Fi
// (62 Mbit/s, 9 ms a message), say), as `shoal plan` makes it: images
// as 8-bit pixels, ReLU outputs lz4'd.
#ifndef SHOAL_PLANNER_PI_THREES_TEST_UTIL_H_
#define SHOAL_PLANNER_PI_THREES_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cluster/cluster.h"
#include "partition/strategy.h"
#include "sim/latency_model.h"

namespace shoal::testing {

// `n` boards of class `board` on their class's links.
inline PlanOptions Boards(int n, const std::string& board,
                          const std::string& model) {
  std::string yaml = "devices:\n";
  for (int i = 0; i < n; ++i) {
    yaml += "  - name: pi" + std::to_string(i) +
            "\n    address: 127.0.0.1:" + std::to_string(7201 + i) +
            "\n    board: " + board + "\n";
  }
  auto c = ParseCluster(yaml, "test");
  EXPECT_TRUE(c.ok()) << c.status().message();
  PlanOptions po;
  po.strategy = "auto";
  po.devices = c->PlanDevices();
  po.latency = std::make_shared<LatencyModel>(LatencyModel::FromCluster(*c));
  po.model.spec = model;
  po.input_pixels = true;
  po.wire.lz4 = true;
  po.link_rates = c->UplinkRates();
  po.link_latency_s = c->MaxLinkLatency();
  return po;
}

inline PlanOptions PiThrees(int n, const std::string& model) {
  return Boards(n, "pi3b+", model);
}

}  // namespace shoal::testing

#endif  // SHOAL_PLANNER_PI_THREES_TEST_UTIL_H_
