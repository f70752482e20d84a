#include "pkg/api/symbol.h"

#include <mutex>
#include <unordered_set>

namespace kdesched::api {
namespace {

struct TransparentHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};

struct Table {
  std::mutex mu;
  // Node-based set: element addresses never move, so handles stay valid while others insert.
  std::unordered_set<std::string, TransparentHash, std::equal_to<>> strings;
  const std::string* empty;
  Table() { empty = &*strings.emplace().first; }
};

Table& table() {
  static Table* t = new Table();  // never destroyed: handles may be used during static teardown
  return *t;
}

}  // namespace

Symbol::Symbol() : p_(table().empty) {}

Symbol::Symbol(std::string_view s) {
  Table& t = table();
  if (s.empty()) {
    p_ = t.empty;
    return;
  }
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.strings.find(s);
  if (it == t.strings.end()) it = t.strings.emplace(s).first;
  p_ = &*it;
}

}  // namespace kdesched::api
