// docs/operators.md, generated from the op registry, the kernel registries
// and the ONNX importer's tables, so the document cannot drift from the code
// (src/cli/operator_docs_test.cc fails when the checked-in file is stale;
// `shoal ops --markdown` prints it).
#ifndef SHOAL_CLI_OPERATOR_DOCS_H_
#define SHOAL_CLI_OPERATOR_DOCS_H_

#include <string>

#include "graph/op_registry.h"

namespace shoal {

// The split facts of an op as a phrase ("kept whole" when none).
std::string DescribeSplit(const SplitFacts& f);

// The whole of docs/operators.md.
std::string OperatorsMarkdown();

}  // namespace shoal

#endif  // SHOAL_CLI_OPERATOR_DOCS_H_
