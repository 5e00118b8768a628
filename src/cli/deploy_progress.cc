#include "cli/deploy_progress.h"

namespace shoal {

std::shared_ptr<ProgressBar> ShowDeployProgress(CoordinatorOptions* co) {
  auto bar = std::make_shared<ProgressBar>("uploading weights", 0,
                                           ProgressBar::Unit::kBytes);
  co->upload_progress = [bar](const std::string& device, int64_t more_total,
                              int64_t sent) {
    if (more_total > 0) bar->AddTotal(more_total);
    if (sent > 0) bar->Add(sent, "to " + device);
  };
  return bar;
}

}  // namespace shoal
