// `shoal dataset extract DATASET [--split test|train] [--first I]
// [--count N] -o DIR [--json]`: writes images of a packaged dataset
// (Debian's Fashion-MNIST) as PNG files named by their true labels, so that
// `shoal infer --image` and serve's image route have real images to answer
// without a download.
#include <cctype>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "io/image_write.h"
#include "train/fashion_mnist.h"

namespace shoal {
namespace {

struct DatasetExtractArgs {
  std::string dataset, split = "test", out;
  int64_t first = 0, count = 10;
  bool json = false;
};

// "T-shirt/top" -> "t-shirt-top", "Ankle boot" -> "ankle-boot".
std::string Slug(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!s.empty() && s.back() != '-') {
      s += '-';
    }
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

// "test-00042-9-ankle-boot.png": the split, the image's index in it, its
// label and, for Fashion-MNIST, its class name.
std::string FileName(const std::string& split, int64_t index, int label,
                     const std::string& name) {
  std::ostringstream o;
  o << split << "-" << std::setw(5) << std::setfill('0') << index << "-"
    << label << (name.empty() ? "" : "-" + Slug(name)) << ".png";
  return o.str();
}

Status RunDatasetExtract(const DatasetExtractArgs& a) {
  if (a.split != "test" && a.split != "train")
    return InvalidArgument("--split is 'test' or 'train', not '" + a.split +
                           "'");
  if (a.first < 0 || a.count < 1)
    return InvalidArgument("--first must be >= 0 and --count >= 1");
  ASSIGN_OR_RETURN(ImageDataset data, LoadFashionMnist(a.dataset));
  const ImageSet& set = a.split == "test" ? data.test : data.train;
  if (a.first + a.count > set.count)
    return InvalidArgument("the " + a.split + " split of " + data.dir +
                           " holds " + std::to_string(set.count) +
                           " images: --first " + std::to_string(a.first) +
                           " --count " + std::to_string(a.count) +
                           " reaches past it");
  // Class names for Debian's Fashion-MNIST; another directory may hold
  // MNIST's digits, so its labels are numbers only.
  const bool named = data.dir == kDebianFashionMnistDir;
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec)
    return InvalidArgument("cannot create directory '" + a.out +
                           "': " + ec.message());
  nlohmann::json files = nlohmann::json::array();
  const int64_t pixels = set.rows * set.cols;
  if (!a.json)
    std::cout << "writing " << a.count << " " << a.split << " image"
              << (a.count == 1 ? "" : "s") << " of " << data.dir << " ("
              << set.cols << "x" << set.rows << " gray PNG) to " << a.out
              << ":\n";
  for (int64_t i = a.first; i < a.first + a.count; ++i) {
    const int label = set.labels[i];
    const std::string name = named ? FashionMnistClassNames()[label] : "";
    const std::string path = a.out + "/" + FileName(a.split, i, label, name);
    RETURN_IF_ERROR(
        WritePng(path, set.cols, set.rows, 1, set.pixels.data() + i * pixels));
    nlohmann::json f = {{"path", path}, {"index", i}, {"label", label}};
    if (named) f["name"] = name;
    files.push_back(f);
    if (!a.json)
      std::cout << "  " << path << "  " << label << (named ? " " + name : "")
                << "\n";
  }
  if (a.json) {
    nlohmann::json j = {{"dataset", data.dir},
                        {"split", a.split},
                        {"rows", set.rows},
                        {"cols", set.cols},
                        {"files", files}};
    std::cout << j.dump(2) << "\n";
  }
  return Status::Ok();
}

}  // namespace

void AddDatasetCommand(CLI::App* app) {
  auto* cmd = app->add_subcommand(
      "dataset", "Images of a packaged dataset (Debian's Fashion-MNIST)");
  cmd->require_subcommand(1);
  auto a = std::make_shared<DatasetExtractArgs>();
  auto* ex = cmd->add_subcommand(
      "extract",
      "Write images of the dataset as PNG files named by their true labels "
      "(e.g. test-00000-9-ankle-boot.png), for `shoal infer --image`");
  ex->add_option("dataset", a->dataset,
                 "'fashion-mnist' (" + std::string(kDebianFashionMnistDir) +
                     ") or a directory with the four *-idx?-ubyte.gz files")
      ->required();
  ex->add_option("--split", a->split, "test (default) or train");
  ex->add_option("--first", a->first,
                 "Index of the first image in the split (default 0)");
  ex->add_option("--count", a->count, "How many images (default 10)");
  ex->add_option("-o,--output", a->out, "Directory to write them to")
      ->required();
  ex->add_flag("--json", a->json, "Print one JSON object");
  ex->callback([a] { throw CommandExit(ReportStatus(RunDatasetExtract(*a))); });
}

}  // namespace shoal
