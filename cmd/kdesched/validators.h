// Flag checks with messages for people. CLI11's NonNegativeNumber names its range as
// "0.000000 to <DBL_MAX in 309 digits>"; this one says what is wrong.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kdesched::cmd {

inline CLI::Validator nonNegative() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(in, v)) return "Value " + in + " is not a number";
        if (v < 0) return "Value " + in + " must be zero or positive";
        return "";
      },
      "NONNEGATIVE", "NonNegativeNumber");
}

}  // namespace kdesched::cmd
