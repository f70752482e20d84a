// Labels and label selectors (metav1.LabelSelector and the selector string syntax).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/symbol.h"
#include "pkg/base/status.h"

namespace kdesched::api {

// A label set: interned key/value pairs sorted by key content (unique keys).
class Labels {
 public:
  using Item = std::pair<Symbol, Symbol>;
  Labels() = default;
  Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> kv);
  // Builds a label set from pairs in any order; for a repeated key the last pair wins, as when
  // decoding a JSON object with duplicate keys.
  static Labels fromUnsorted(std::vector<Item> items);

  std::optional<std::string_view> get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key).has_value(); }
  void set(std::string_view key, std::string_view value);  // insert or replace (copies the set)
  std::size_t size() const { return items().size(); }
  bool empty() const { return items_ == nullptr; }
  auto begin() const { return items().begin(); }
  auto end() const { return items().end(); }
  bool operator==(const Labels& o) const { return items_ == o.items_ || items() == o.items(); }
  std::string toString() const;  // "a=b,c=d" in key order

 private:
  // Immutable and hash-consed: the pods of one ReplicaSet share one copy of their label set.
  // Null when empty.
  const std::vector<Item>& items() const;
  void assign(std::vector<Item> items);
  std::shared_ptr<const std::vector<Item>> items_;
};

// In/NotIn/Exists/DoesNotExist are the LabelSelector operators; Gt/Lt only come from the string
// syntax (labels.Parse accepts them; the top-level policy nodeSelector is parsed with it).
enum class LabelSelectorOp { In, NotIn, Exists, DoesNotExist, Gt, Lt };

struct LabelSelectorRequirement {
  std::string key;
  LabelSelectorOp op = LabelSelectorOp::In;
  std::vector<std::string> values;
  bool operator==(const LabelSelectorRequirement&) const = default;
};

// A set selector: every matchLabels pair and every expression must hold (AND). An empty selector
// (no labels, no expressions) matches everything; "no selector at all" is modelled by the caller
// with std::optional and matches nothing where Kubernetes says so.
struct LabelSelector {
  std::vector<std::pair<std::string, std::string>> matchLabels;
  std::vector<LabelSelectorRequirement> matchExpressions;
  bool operator==(const LabelSelector&) const = default;

  bool empty() const { return matchLabels.empty() && matchExpressions.empty(); }
  bool matches(const Labels& labels) const;
  std::string toString() const;  // selector string syntax, e.g. "app=order,tier in (a,b),!x"
};

// Validates keys, values and operators as the API server does for metav1.LabelSelector:
// In/NotIn need >= 1 value, Exists/DoesNotExist take none; Gt/Lt are not legal here.
// The error names the offending element, e.g. `matchExpressions[1].operator: "Maybe" is not ...`.
Status validateLabelSelector(const LabelSelector& s);

// Parses the selector string syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
// `a>1`, `a<1`, comma-separated (AND). An empty string is the empty selector (matches everything).
Result<LabelSelector> parseLabelSelector(std::string_view text);

// Parses an operator name as it appears in JSON/YAML ("In", "NotIn", "Exists", "DoesNotExist").
Result<LabelSelectorOp> parseLabelSelectorOp(std::string_view op);

// Label key/value syntax checks (qualified name with optional DNS-subdomain prefix; value <= 63).
bool isValidLabelKey(std::string_view key);
bool isValidLabelValue(std::string_view value);

// A label value read as an integer the way the Gt/Lt operators read it (strconv.ParseInt base 10:
// optional sign, decimal digits, int64 range); nullopt when it is not one.
std::optional<std::int64_t> parseLabelInt64(std::string_view value);

}  // namespace kdesched::api
