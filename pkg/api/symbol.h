// Interned strings: label keys and values, namespaces, node names and owner names repeat across
// thousands of objects, so the store keeps one copy of each and objects hold 8-byte handles.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace kdesched::api {

// A handle to an interned, immutable string. Equality is pointer equality. Interned strings live
// for the whole process (the set of distinct label keys/values in a cluster is small and bounded
// by the cluster's vocabulary, not by its churn).
class Symbol {
 public:
  Symbol();  // the empty string
  explicit Symbol(std::string_view s);

  std::string_view view() const { return *p_; }
  const std::string& str() const { return *p_; }
  bool empty() const { return p_->empty(); }
  bool operator==(const Symbol& o) const { return p_ == o.p_; }
  bool operator!=(const Symbol& o) const { return p_ != o.p_; }
  // Ordering by content, so sorted containers are deterministic across runs.
  bool operator<(const Symbol& o) const { return p_ != o.p_ && *p_ < *o.p_; }
  std::size_t hash() const { return std::hash<const void*>()(p_); }

 private:
  const std::string* p_;
};

}  // namespace kdesched::api

template <>
struct std::hash<kdesched::api::Symbol> {
  std::size_t operator()(const kdesched::api::Symbol& s) const noexcept { return s.hash(); }
};
