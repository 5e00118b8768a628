#include "train/fashion_mnist.h"

#include <filesystem>

#include "train/idx_file.h"

namespace shoal {
namespace {

StatusOr<ImageSet> LoadSplit(const std::string& dir, const std::string& stem) {
  const std::string images = dir + "/" + stem + "-images-idx3-ubyte.gz";
  const std::string labels = dir + "/" + stem + "-labels-idx1-ubyte.gz";
  ASSIGN_OR_RETURN(IdxArray im, ReadIdxFile(images, 3));
  ASSIGN_OR_RETURN(IdxArray lb, ReadIdxFile(labels, 1));
  if (lb.dims[0] != im.dims[0])
    return InvalidArgument("IDX file '" + labels + "' holds " +
                           std::to_string(lb.dims[0]) + " labels but '" +
                           images + "' holds " + std::to_string(im.dims[0]) +
                           " images");
  for (size_t i = 0; i < lb.data.size(); ++i)
    if (lb.data[i] >= 10)
      return InvalidArgument("IDX file '" + labels + "': label " +
                             std::to_string(lb.data[i]) + " at index " +
                             std::to_string(i) + " is not a class 0-9");
  ImageSet s;
  s.count = im.dims[0];
  s.rows = im.dims[1];
  s.cols = im.dims[2];
  s.pixels = std::move(im.data);
  s.labels = std::move(lb.data);
  return s;
}

}  // namespace

const std::vector<std::string>& FashionMnistClassNames() {
  static const std::vector<std::string> names = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

StatusOr<ImageDataset> LoadFashionMnist(const std::string& spec) {
  ImageDataset d;
  d.dir = spec == "fashion-mnist" ? kDebianFashionMnistDir : spec;
  std::error_code ec;
  if (!std::filesystem::is_directory(d.dir, ec))
    return NotFound(
        "dataset directory '" + d.dir + "' does not exist" +
        (spec == "fashion-mnist"
             ? " (install Debian's dataset-fashion-mnist package)"
             : " (give 'fashion-mnist' or a directory with the four "
               "*-idx?-ubyte.gz files)"));
  ASSIGN_OR_RETURN(d.train, LoadSplit(d.dir, "train"));
  ASSIGN_OR_RETURN(d.test, LoadSplit(d.dir, "t10k"));
  return d;
}

}  // namespace shoal
