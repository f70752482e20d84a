// The Prometheus text exposition format, read back: what kdesched's /metrics serves, for the
// kubectl plugin's status. Only samples; HELP, TYPE and other comments are skipped.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kdesched::inspect {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Lines that do not parse are skipped: a figure the status cannot read is left out, never guessed.
std::vector<Sample> parseExposition(std::string_view text);

// The sum of `name`'s samples, by the value of `label` ("" sums them all under "").
std::map<std::string, double> sumBy(const std::vector<Sample>& samples, std::string_view name,
                                    const std::string& label);

}  // namespace kdesched::inspect
