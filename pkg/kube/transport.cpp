#include "pkg/kube/transport.h"

#include <algorithm>
#include <cctype>

namespace kdesched::kube {

std::string findHeader(const Headers& headers, std::string_view name) {
  auto equal = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& [k, v] : headers) {
    if (equal(k, name)) return v;
  }
  return "";
}

}  // namespace kdesched::kube
