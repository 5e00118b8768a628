// The files of the dashboard of `shoal serve --dashboard` (src/serve/
// dashboard/) and Debian's Chart.js, compiled into the binary by
// cmake/embed_files.cmake: the page needs nothing from the network, and
// the binary nothing from the disk.
#ifndef SHOAL_SERVE_DASHBOARD_ASSETS_H_
#define SHOAL_SERVE_DASHBOARD_ASSETS_H_

#include <string_view>
#include <vector>

namespace shoal {

struct EmbeddedFile {
  std::string_view name;  // base name: "index.html", "chart.min.js"
  std::string_view data;
};

const std::vector<EmbeddedFile>& DashboardAssets();

}  // namespace shoal

#endif  // SHOAL_SERVE_DASHBOARD_ASSETS_H_
