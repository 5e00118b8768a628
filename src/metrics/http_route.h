// Paths of the HTTP endpoints as patterns, matched without std::regex: a
// pattern is literal segments and `{name}` segments, each of which takes
// one non-empty segment of the path ("/v2/models/{model}/infer"). The
// path comes from the network; std::regex walks it recursively, one frame
// per character.
#ifndef SHOAL_METRICS_HTTP_ROUTE_H_
#define SHOAL_METRICS_HTTP_ROUTE_H_

#include <map>
#include <string>
#include <string_view>

namespace shoal {

// True when `path` matches `pattern`; the `{name}` segments go to *params.
bool MatchPath(std::string_view pattern, std::string_view path,
               std::map<std::string, std::string>* params);

}  // namespace shoal

#endif  // SHOAL_METRICS_HTTP_ROUTE_H_
