// A model's class names and input normalization, as its metadata states
// them (graph/model_metadata.h): what `infer --image`, `run --image` and
// serve's image route use in place of ImageNet's defaults.
#ifndef SHOAL_IO_IMAGE_METADATA_H_
#define SHOAL_IO_IMAGE_METADATA_H_

#include <string>
#include <vector>

#include "graph/model_metadata.h"
#include "io/pixels.h"
#include "util/status.h"

namespace shoal {

void SetClassNames(const std::vector<std::string>& names, ModelMetadata* m);
void SetImageNormalization(const ImageNormalization& n, ModelMetadata* m);

// The class names `m` states; empty when it states none. A value that is
// not a JSON array of strings is an error naming the key.
StatusOr<std::vector<std::string>> ClassNamesOf(const ModelMetadata& m);

// The normalization `m` states for an input of `channels` channels (one
// value, or one per channel); DefaultNormalization(channels) when it states
// none. Mean without std (or the reverse), a value that is not a list of
// numbers, a count that is neither 1 nor `channels`, or a std that is not
// positive is an error naming the key.
StatusOr<ImageNormalization> ImageNormalizationOf(const ModelMetadata& m,
                                                  int64_t channels);

}  // namespace shoal

#endif  // SHOAL_IO_IMAGE_METADATA_H_
