// Operator logs: one line per decision, key=value text, or JSON objects with --logging-format json
// (each key=value pair of the message becomes a JSON field).
#pragma once

#include <string>

#include "pkg/base/status.h"

namespace kdesched::daemon {

// format: "text" | "json"; verbosity: upstream's -v (0-2 info, 3-5 debug, 6+ trace).
Status setupLogging(const std::string& format, int verbosity);

// "msg=\"evicted pod\" pod=default/x n=1" → {"msg":"evicted pod","pod":"default/x","n":"1"}
std::string keyValuesToJson(std::string_view line);

}  // namespace kdesched::daemon
