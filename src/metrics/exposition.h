// The Prometheus text exposition format (version 0.0.4) of a registry, as
// prometheus-cpp writes it, and the buckets shoal's histograms share.
#ifndef SHOAL_METRICS_EXPOSITION_H_
#define SHOAL_METRICS_EXPOSITION_H_

#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

namespace shoal {

// What `GET /metrics` answers with, and its content type.
std::string ExpositionText(const prometheus::Registry& registry);
inline constexpr const char* kExpositionContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Seconds from half a millisecond (a small layer on a fast core) to 30 s (a
// large model on a slow board, or a request's deadline), about 2.5x apart.
prometheus::Histogram::BucketBoundaries SecondsBuckets();

}  // namespace shoal

#endif  // SHOAL_METRICS_EXPOSITION_H_
