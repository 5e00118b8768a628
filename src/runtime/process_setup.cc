#include "runtime/process_setup.h"

#include <absl/synchronization/mutex.h>

namespace shoal {

void SkipMutexDeadlockChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace shoal
