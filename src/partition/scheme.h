// The ways a layer can be placed on the devices, as names that plans, the
// cost model and the command line share.
#ifndef SHOAL_PARTITION_SCHEME_H_
#define SHOAL_PARTITION_SCHEME_H_

#include <string>

#include "util/status.h"

namespace shoal {

enum class Scheme {
  kWhole,    // the layer runs on one device (the hub)
  kLop,      // layer output partitioning (fully-distributed paper §4.1)
  kLip,      // layer input partitioning
  kFuse1,    // first layer of a fused pair: LOP, outputs kept on the device
  kFuse2,    // second layer of a fused pair: LIP on the kept outputs
  kChannel,  // conv splits of the collaborative-execution paper
  kFilter,
  kSpatial,
  kPipeline,  // whole layers, consecutive groups on different devices
};

// "whole", "lop", "lip", "fuse1", "fuse2", "channel", "filter", "spatial",
// "pipeline": the names `shoal cost --json` prints.
const char* SchemeName(Scheme scheme);

// The inverse of SchemeName; an unknown name is an InvalidArgument error that
// lists the valid ones.
StatusOr<Scheme> ParseScheme(const std::string& name);

}  // namespace shoal

#endif  // SHOAL_PARTITION_SCHEME_H_
