#include "pkg/base/duration_text.h"

namespace kdesched {

std::string durationText(double seconds) {
  if (seconds > 0 && seconds < 1) return std::to_string(static_cast<long long>(seconds * 1000)) + "ms";
  const auto total = seconds > 0 ? static_cast<long long>(seconds) : 0LL;
  std::string out;
  if (total >= 3600) out += std::to_string(total / 3600) + "h";
  if (total % 3600 >= 60) out += std::to_string(total % 3600 / 60) + "m";
  if (total % 60 != 0 || out.empty()) out += std::to_string(total % 60) + "s";
  return out;
}

}  // namespace kdesched
