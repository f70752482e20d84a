// Ages in eviction reasons: "2h5m", "45s", as people read them.
#pragma once

#include <cstdint>
#include <string>

namespace kdesched::plugins {

inline std::string describeAge(std::int64_t seconds) {
  if (seconds < 60) return std::to_string(seconds) + "s";
  const std::int64_t d = seconds / 86400, h = seconds % 86400 / 3600, m = seconds % 3600 / 60;
  if (d > 0) return std::to_string(d) + "d" + std::to_string(h) + "h";
  if (h > 0) return std::to_string(h) + "h" + std::to_string(m) + "m";
  return std::to_string(m) + "m" + std::to_string(seconds % 60) + "s";
}

}  // namespace kdesched::plugins
