#include "pkg/inspect/exposition.h"

#include <cstdlib>
#include <optional>

namespace kdesched::inspect {
namespace {

// `{a="x",b="y\"z"}` from `pos` (at the '{'); the position after the '}'; nullopt when malformed.
std::optional<std::size_t> parseLabels(std::string_view line, std::size_t pos,
                                       std::map<std::string, std::string>& out) {
  ++pos;
  while (pos < line.size()) {
    if (line[pos] == '}') return pos + 1;
    if (line[pos] == ',' || line[pos] == ' ') {
      ++pos;
      continue;
    }
    const std::size_t eq = line.find('=', pos);
    if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') return std::nullopt;
    std::string key(line.substr(pos, eq - pos)), value;
    pos = eq + 2;
    for (; pos < line.size() && line[pos] != '"'; ++pos) {
      if (line[pos] == '\\' && pos + 1 < line.size()) {
        ++pos;
        value += line[pos] == 'n' ? '\n' : line[pos];
      } else {
        value += line[pos];
      }
    }
    if (pos >= line.size()) return std::nullopt;
    out[std::move(key)] = std::move(value);
    ++pos;
  }
  return std::nullopt;
}

}  // namespace

std::vector<Sample> parseExposition(std::string_view text) {
  std::vector<Sample> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    std::size_t pos = line.find_first_of("{ ");
    if (pos == std::string_view::npos || pos == 0) continue;
    s.name = std::string(line.substr(0, pos));
    if (line[pos] == '{') {
      auto after = parseLabels(line, pos, s.labels);
      if (!after) continue;
      pos = *after;
    }
    const std::string rest(line.substr(pos));
    char* parsedEnd = nullptr;
    s.value = std::strtod(rest.c_str(), &parsedEnd);
    if (parsedEnd == rest.c_str()) continue;
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, double> sumBy(const std::vector<Sample>& samples, std::string_view name,
                                    const std::string& label) {
  std::map<std::string, double> out;
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    std::string key;
    if (!label.empty()) {
      auto it = s.labels.find(label);
      key = it == s.labels.end() ? "" : it->second;
    }
    out[key] += s.value;
  }
  return out;
}

}  // namespace kdesched::inspect
