// Finds where LCP branches meet: the final classifier (the last Conv / Gemm /
// MatMul before the single graph output) and the pre-final activation it reads.
#ifndef SHOAL_LCP_FIND_CLASSIFIER_H_
#define SHOAL_LCP_FIND_CLASSIFIER_H_

#include <string>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct ClassifierSite {
  int classifier = -1;     // node index of the classifier
  std::string prefinal;    // the activation the classifier reads
  std::vector<int> trunk;  // nodes the pre-final activation depends on
  std::vector<int> tail;   // weightless nodes after the classifier
};

// Fails (kInvalidArgument) when there is no classifier to merge on: several
// outputs, an output not reached from a Conv/Gemm/MatMul through one-input
// weightless ops, or nothing before the classifier to split.
StatusOr<ClassifierSite> FindClassifier(const Graph& g);

}  // namespace shoal

#endif  // SHOAL_LCP_FIND_CLASSIFIER_H_
