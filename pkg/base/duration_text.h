// Durations for people, as Go prints them from whole seconds: "0s", "12s", "1m", "1m30s",
// "2h5m". Under a second (and above 0): milliseconds, "250ms". Fractions of a second above one
// are dropped.
#pragma once

#include <string>

namespace kdesched {

std::string durationText(double seconds);

}  // namespace kdesched
