// The progress bar of a deployment's weight upload (run, bench, demo):
// bytes sent of the bytes the workers lacked, rate and time left, on a
// terminal's stderr only.
#ifndef SHOAL_CLI_DEPLOY_PROGRESS_H_
#define SHOAL_CLI_DEPLOY_PROGRESS_H_

#include <memory>

#include "runtime/coordinator.h"
#include "util/progress_bar.h"

namespace shoal {

// Sets `co->upload_progress` to feed the returned bar; Finish() it (or let
// it go) once Deploy returns.
std::shared_ptr<ProgressBar> ShowDeployProgress(CoordinatorOptions* co);

}  // namespace shoal

#endif  // SHOAL_CLI_DEPLOY_PROGRESS_H_
