// The fast test binary's in-process runners, for the plan-running tests of
// the stages below runtime (plan/in_process_run_test_util.h).
#include "runtime/in_process_run_test_util.h"

namespace {
const bool kFilled = shoal::testing::FillInProcessRunners();
}  // namespace
