#include "pkg/api/symbol.h"

#include <algorithm>
#include <mutex>
#include <unordered_set>

namespace kdesched::api {
namespace {

struct EntryHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
  std::size_t operator()(const detail::SymbolEntry& e) const noexcept { return (*this)(std::string_view(e.text)); }
};
struct EntryEq {
  using is_transparent = void;
  static std::string_view text(std::string_view s) { return s; }
  static std::string_view text(const detail::SymbolEntry& e) { return e.text; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return text(a) == text(b);
  }
};

// Entries no Symbol holds are erased when the table has doubled since the last sweep, so sweeping
// costs amortised O(1) per new string and the table holds at most twice the live strings (plus the
// floor). A count can rise from zero only here, under the lock (a copy needs a holder), so an entry
// seen at zero under the lock is garbage.
constexpr std::size_t kSweepFloor = 4096;

struct Table {
  std::mutex mu;
  // Node-based set: element addresses never move, so handles stay valid while others insert.
  std::unordered_set<detail::SymbolEntry, EntryHash, EntryEq> entries;
  std::size_t sweepAt = kSweepFloor;

  void sweep() {
    std::erase_if(entries, [](const detail::SymbolEntry& e) { return e.refs.load(std::memory_order_acquire) == 0; });
    sweepAt = std::max(kSweepFloor, 2 * entries.size());
  }
};

Table& table() {
  static Table* t = new Table();  // never destroyed: handles may be used during static teardown
  return *t;
}

}  // namespace

const std::string& detail::emptyText() {
  static const std::string* empty = new std::string();
  return *empty;
}

Symbol::Symbol(std::string_view s) {
  if (s.empty()) return;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.entries.find(s);
  if (it == t.entries.end()) {
    if (t.entries.size() >= t.sweepAt) t.sweep();
    it = t.entries.emplace(s).first;
  }
  it->refs.fetch_add(1, std::memory_order_relaxed);
  p_ = &*it;
}

std::size_t Symbol::tableSize() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.entries.size();
}

}  // namespace kdesched::api
