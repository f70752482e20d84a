// RFC 3339 timestamps as the API server writes them (metadata.creationTimestamp, status.startTime)
// and as `kdesched plan --now` takes them.
#pragma once

#include <string_view>

#include "pkg/api/types.h"
#include "pkg/base/status.h"

namespace kdesched::api {

// Parses "2024-01-02T03:04:05Z", with an optional fraction and a Z or ±HH:MM offset, as Go's
// time.RFC3339 layout reads it; seconds since the Unix epoch (the fraction is dropped).
Result<Timestamp> parseTimestamp(std::string_view text);

}  // namespace kdesched::api
