// Resource quantities (resource.Quantity) and resource lists.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/symbol.h"
#include "pkg/base/status.h"

namespace kdesched::api {

// Parses a quantity in any legal Kubernetes form ("100m", "1", "1.5", "2Gi", "512Mi", "1e3", "1E3",
// "3000", "1k", "1M", "0", "+1", "-1", ".5", "0.5Ki", "1n") and returns it in milli-units, rounded up
// as Quantity.MilliValue() does (negative amounts round away from zero). Illegal text ("12x", "",
// "1.2.3", "1 Gi", "1K") and values that do not fit in int64 milli-units (e.g. "1E" = 10^21 milli)
// are errors naming the text. As in resource.ParseQuantity, the number part may be empty: "Mi", "."
// and "-" are legal zeros. No surrounding whitespace is accepted (JSON decoding trims it first).
Result<std::int64_t> parseQuantityMilli(std::string_view text);

// The amount kdesched holds for a quantity beyond int64 milli-units. The API server stores such
// quantities (it validates only that requests and capacities are non-negative: "10P" of memory is
// 10^19 milli, "1e30" of cpu is stored as written), and refusing them would let anyone who may
// create a pod switch kdesched off. So objects decode with the amount saturated to this value, and
// every sum of amounts saturates at it too (addSaturating). A saturated amount is a lower bound,
// never a figure to decide on: usage plugins treat a node whose usage is saturated as unknown.
inline constexpr std::int64_t kSaturatedMilli = std::numeric_limits<std::int64_t>::max();
inline constexpr bool isSaturated(std::int64_t milli) { return milli >= kSaturatedMilli; }

// a + b, clamped to [INT64_MIN, kSaturatedMilli] instead of overflowing (undefined behaviour).
std::int64_t addSaturating(std::int64_t a, std::int64_t b);
// a × b for a, b >= 0, clamped to kSaturatedMilli.
std::int64_t mulSaturating(std::int64_t a, std::int64_t b);
// A double as milli-units: NaN is 0, beyond the int64 range clamps (a plain cast is undefined).
std::int64_t milliFromDouble(double milli);

// As parseQuantityMilli, but an amount beyond int64 milli-units is not an error: it comes back as
// ±kSaturatedMilli with `saturated` set. Illegal text is still an error.
struct SaturatingMilli {
  std::int64_t milli = 0;
  bool saturated = false;
};
Result<SaturatingMilli> parseQuantityMilliSaturating(std::string_view text);

// Formats milli-units compactly for people: cpu-like "250m"/"2", bytes-like "512Mi"/"1Gi". Exact:
// the text parses back to the same amount (the largest suffix that divides the value is used).
std::string formatMilli(std::int64_t milli, bool binary = false);

// Resources conventionally shown with binary suffixes (memory, storage, hugepages-*).
bool isBinaryResource(std::string_view name);

inline const Symbol& kCpu() {
  static const Symbol s("cpu");
  return s;
}
inline const Symbol& kMemory() {
  static const Symbol s("memory");
  return s;
}
inline const Symbol& kPods() {
  static const Symbol s("pods");
  return s;
}
inline const Symbol& kEphemeralStorage() {
  static const Symbol s("ephemeral-storage");
  return s;
}

// A resource name → amount map, all amounts in milli-units, sorted by name content.
class ResourceList {
 public:
  using Item = std::pair<Symbol, std::int64_t>;
  ResourceList() = default;
  ResourceList(std::initializer_list<std::pair<std::string_view, std::int64_t>> milli);

  std::int64_t get(const Symbol& name) const;  // 0 when absent
  bool has(const Symbol& name) const;
  void set(const Symbol& name, std::int64_t milli);
  void add(const Symbol& name, std::int64_t milli);  // absent counts as 0
  void addAll(const ResourceList& other);
  void maxWith(const ResourceList& other);  // per resource: max(this, other)
  // The resources whose amount is saturated (isSaturated), in name order; "" when there are none.
  std::string saturatedNames() const;
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  bool operator==(const ResourceList&) const = default;
  std::string toString() const;  // "cpu=250m,memory=512Mi"
  void shrinkToFit() { items_.shrink_to_fit(); }

 private:
  std::vector<Item> items_;
};

}  // namespace kdesched::api
