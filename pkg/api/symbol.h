// Interned strings: label keys and values, namespaces, node names and owner names repeat across
// thousands of objects, so the store keeps one copy of each and objects hold 8-byte handles.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kdesched::api {

namespace detail {
// One interned string and the number of Symbols holding it. An entry no Symbol holds stays in the
// table until the next sweep (see symbol.cpp), so a count reaching zero needs no lock.
struct SymbolEntry {
  explicit SymbolEntry(std::string_view s) : text(s) {}
  std::string text;
  mutable std::atomic<std::uint32_t> refs{0};
};
const std::string& emptyText();
}  // namespace detail

// A handle to an interned, immutable string. Equality is pointer equality. A string lives while a
// Symbol holds it: label values are not bounded by the cluster's vocabulary (pod-template-hash
// after every rollout, a Job's controller-uid, a StatefulSet's pod-name), so a daemon that kept
// every string it ever saw would grow with its churn. The empty string is the null handle.
class Symbol {
 public:
  constexpr Symbol() noexcept = default;  // the empty string
  explicit Symbol(std::string_view s);
  Symbol(const Symbol& o) noexcept : p_(o.p_) { retain(); }
  Symbol(Symbol&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Symbol& operator=(const Symbol& o) noexcept {
    if (p_ != o.p_) {
      o.retain();
      drop();
      p_ = o.p_;
    }
    return *this;
  }
  Symbol& operator=(Symbol&& o) noexcept {
    if (this != &o) {
      drop();
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  ~Symbol() { drop(); }

  std::string_view view() const { return p_ ? std::string_view(p_->text) : std::string_view(); }
  const std::string& str() const { return p_ ? p_->text : detail::emptyText(); }
  bool empty() const { return p_ == nullptr; }
  bool operator==(const Symbol& o) const { return p_ == o.p_; }
  bool operator!=(const Symbol& o) const { return p_ != o.p_; }
  // Ordering by content, so sorted containers are deterministic across runs.
  bool operator<(const Symbol& o) const { return p_ != o.p_ && view() < o.view(); }
  std::size_t hash() const { return std::hash<const void*>()(p_); }

  // The number of distinct non-empty strings in the table, held or awaiting the next sweep.
  static std::size_t tableSize();

 private:
  void retain() const noexcept {
    if (p_) p_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void drop() noexcept {
    if (p_) p_->refs.fetch_sub(1, std::memory_order_release);
  }
  const detail::SymbolEntry* p_ = nullptr;
};

}  // namespace kdesched::api

template <>
struct std::hash<kdesched::api::Symbol> {
  std::size_t operator()(const kdesched::api::Symbol& s) const noexcept { return s.hash(); }
};
