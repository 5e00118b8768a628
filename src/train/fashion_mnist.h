// The Fashion-MNIST dataset (Debian's dataset-fashion-mnist): 60 000 training
// and 10 000 test images, 28x28 grayscale, labels 0-9, in four gzipped IDX
// files.
#ifndef SHOAL_TRAIN_FASHION_MNIST_H_
#define SHOAL_TRAIN_FASHION_MNIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

// Where Debian's package installs it; `--dataset fashion-mnist` means this.
inline constexpr char kDebianFashionMnistDir[] =
    "/usr/share/datasets/fashion-mnist";

// Fashion-MNIST's ten classes, by label: "T-shirt/top", "Trouser", ...,
// "Ankle boot" (the names of the dataset's README).
const std::vector<std::string>& FashionMnistClassNames();

struct ImageSet {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // count x rows x cols
  std::vector<uint8_t> labels;  // count
};

struct ImageDataset {
  std::string dir;
  ImageSet train, test;
  int64_t classes = 10;
};

// `spec` is "fashion-mnist" (the Debian directory) or a directory holding
// train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
// t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (Debian's holds
// 60 000 / 10 000 images; a directory may hold fewer, or MNIST). Checks each
// file's format, that a split has as many labels as images, and that every
// label is below 10; errors name the file.
StatusOr<ImageDataset> LoadFashionMnist(const std::string& spec);

}  // namespace shoal

#endif  // SHOAL_TRAIN_FASHION_MNIST_H_
