#include "pkg/policy/args.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <limits>
#include <unordered_map>
#include <utility>

#include "pkg/policy/detail/yaml_value.h"

namespace kdesched::policy {
namespace {

using api::ScalarType;
using detail::describeValue;
using detail::isUnset;
using detail::lineOf;
using detail::quote;
using detail::scalarOf;

bool isStringScalar(const YAML::Node& n) { return n.IsScalar() && scalarOf(n).type == ScalarType::String; }

// A plain `5`, `true` or `no` is not a string to upstream either; saying how to fix it saves a
// round trip ("no" as a country code is the classic).
std::string mustBeString(const YAML::Node& v) {
  if (v.IsScalar() && !isUnset(v)) {
    return "must be a string (quote it: " + quote(v.Scalar()) + "), got " + describeValue(v);
  }
  return "must be a string, got " + describeValue(v);
}

bool isIdentifier(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// A plain identifier, optionally followed by list indexes: plugins name elements of their own
// list fields this way (`error("nodeAffinityType[1]", ...)`), and the path should read naturally.
bool isSimpleKey(std::string_view key) {
  std::size_t bracket = key.find('[');
  if (bracket == std::string_view::npos) return isIdentifier(key);
  if (!isIdentifier(key.substr(0, bracket))) return false;
  std::string_view rest = key.substr(bracket);
  while (!rest.empty()) {
    std::size_t close = rest.find(']');
    if (rest[0] != '[' || close == std::string_view::npos || close == 1) return false;
    std::string_view digits = rest.substr(1, close - 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    rest = rest.substr(close + 1);
  }
  return true;
}

// An integer as upstream accepts it: a YAML integer, or a float with an integral value (go-yaml
// turns `5.0` into float64 5, which JSON then writes as `5`).
struct IntegerValue {
  bool ok = false;       // the value is an integer at all
  bool inRange = false;  // and fits in int64
  bool negative = false;
  std::int64_t value = 0;
};

IntegerValue parseInteger(const YAML::Node& n) {
  IntegerValue r;
  if (!n.IsScalar()) return r;
  const api::PlainScalar v = scalarOf(n);
  if (v.type == ScalarType::Int) {
    r.ok = true;
    r.inRange = !v.aboveInt64;  // above int64 only ever positive
    r.value = v.int64;
    r.negative = r.inRange && v.int64 < 0;
    return r;
  }
  if (v.type != ScalarType::Float || !std::isfinite(v.real) || std::trunc(v.real) != v.real) return r;
  r.ok = true;
  r.negative = v.real < 0;
  // Go writes such a float with its shortest digits ("-9223372036854776000" for -2^63), which an
  // int64 field cannot hold: the range is open at both ends.
  r.inRange = v.real > -9223372036854775808.0 && v.real < 9223372036854775808.0;
  if (r.inRange) r.value = static_cast<std::int64_t>(v.real);
  return r;
}

// A YAML number as a double (±inf beyond double's range, NaN for .nan); nullopt for anything else.
std::optional<double> parseNumber(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  const api::PlainScalar v = scalarOf(n);
  if (v.type == ScalarType::Float) return v.real;
  if (v.type != ScalarType::Int) return std::nullopt;
  return v.aboveInt64 ? static_cast<double>(v.uint64) : static_cast<double>(v.int64);
}

// time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+, or "0"; result limited to int64 nanoseconds.
std::optional<double> parseGoDuration(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0.0;
  if (s.empty()) return std::nullopt;
  static const std::pair<std::string_view, double> kUnits[] = {{"ns", 1.0},        {"us", 1e3},  {"\xC2\xB5s", 1e3},
                                                               {"\xCE\xBCs", 1e3}, {"ms", 1e6},  {"s", 1e9},
                                                               {"m", 60e9},        {"h", 3600e9}};
  long double totalNs = 0;
  while (!s.empty()) {
    std::size_t i = 0;
    long double value = 0;
    std::size_t intDigits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + (s[i] - '0');
      ++i;
      ++intDigits;
    }
    std::size_t fracDigits = 0;
    if (i < s.size() && s[i] == '.') {
      ++i;
      long double scale = 0.1L;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        value += (s[i] - '0') * scale;
        scale /= 10;
        ++i;
        ++fracDigits;
      }
    }
    if (intDigits == 0 && fracDigits == 0) return std::nullopt;
    std::size_t unitStart = i;
    while (i < s.size() && s[i] != '.' && (s[i] < '0' || s[i] > '9')) ++i;
    std::string_view unit = s.substr(unitStart, i - unitStart);
    const auto* found =
        std::find_if(std::begin(kUnits), std::end(kUnits), [&](const auto& u) { return u.first == unit; });
    if (found == std::end(kUnits)) return std::nullopt;
    totalNs += value * found->second;
    if (totalNs > 9223372036854775807.0L) return std::nullopt;
    s.remove_prefix(i);
  }
  double seconds = static_cast<double>(totalNs / 1e9L);
  return negative ? -seconds : seconds;
}

bool equalIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The closest guarded key `key` is a near miss of, or "".
std::string_view guardedNearMiss(std::string_view key, const std::vector<std::string_view>& guarded,
                                 std::size_t maxTypo) {
  std::string_view best;
  std::size_t bestDistance = std::numeric_limits<std::size_t>::max();
  for (std::string_view g : guarded) {
    std::size_t d = equalIgnoringCase(key, g) ? 0 : editDistance(key, g);
    // The same "half the word rewritten is another word" bound as closestMatch.
    if (d > maxTypo || d * 2 > std::max(key.size(), g.size()) || d >= bestDistance) continue;
    best = g;
    bestDistance = d;
  }
  return best;
}

}  // namespace

bool Namespaces::allows(std::string_view ns) const {
  if (!include.empty()) return std::find(include.begin(), include.end(), ns) != include.end();
  return std::find(exclude.begin(), exclude.end(), ns) == exclude.end();
}

ArgsReader::ArgsReader(const RawArgs& raw) : args_(raw) {
  const YAML::Node& node = detail::yamlOf(args_);
  if (isUnset(node)) return;
  if (!node.IsMap()) {
    std::string where = path().empty() ? std::string() : path() + ": ";
    structural_ = Status::error(where + "must be a mapping, got " + describeValue(node));
    return;
  }
  // yaml-cpp keeps duplicate keys silently and lookups see only the first one: a repeated key
  // would quietly drop the operator's second value, so it is an error.
  std::unordered_map<std::string, YAML::Node> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    // Copies: yaml-cpp's iterator hands out a temporary pair.
    YAML::Node key = it->first;
    if (!key.IsScalar()) {
      std::string where = path().empty() ? std::string() : path() + ": ";
      structural_ =
          Status::error(where + "mapping keys must be strings, got " + describeValue(key) + " on line " + lineOf(key));
      return;
    }
    auto [prev, inserted] = seen.emplace(key.Scalar(), key);
    if (!inserted) {
      structural_ = Status::error(pathOf(key.Scalar()) + ": duplicate key, set on line " + lineOf(prev->second) +
                                  " and again on line " + lineOf(key));
      return;
    }
  }
}

std::string ArgsReader::pathOf(std::string_view key) const {
  // Keys are operator input: anything but a plain identifier is quoted (and escaped).
  if (isSimpleKey(key)) return path().empty() ? std::string(key) : path() + "." + std::string(key);
  return path().empty() ? quote(key) : path() + "[" + quote(key) + "]";
}

Status ArgsReader::error(std::string_view key, const std::string& message) const {
  return Status::error(pathOf(key) + ": " + message);
}

detail::YamlValue ArgsReader::get(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  const YAML::Node& node = detail::yamlOf(args_);
  if (isUnset(node) || !node.IsMap()) return {};
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return {it->second};
  }
  return {};
}

bool ArgsReader::has(std::string_view key) const {
  const YAML::Node& node = detail::yamlOf(args_);
  if (isUnset(node) || !node.IsMap()) return false;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return !isUnset(it->second);
  }
  return false;
}

Status ArgsReader::readBool(std::string_view key, std::optional<bool>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  std::optional<bool> b;
  if (const api::PlainScalar s = scalarOf(v); s.type == ScalarType::Bool) b = s.boolean;
  if (!b) return error(key, "must be true or false, got " + describeValue(v));
  out = *b;
  return Status::ok();
}

Status ArgsReader::readInt64(std::string_view key, std::optional<std::int64_t>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  IntegerValue i = parseInteger(v);
  if (!i.ok) return error(key, "must be an integer, got " + describeValue(v));
  if (!i.inRange) return error(key, "must fit in a 64-bit integer, got " + describeValue(v));
  out = i.value;
  return Status::ok();
}

Status ArgsReader::readInt32(std::string_view key, std::optional<std::int32_t>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  IntegerValue i = parseInteger(v);
  if (!i.ok) return error(key, "must be an integer, got " + describeValue(v));
  if (!i.inRange || i.value < std::numeric_limits<std::int32_t>::min() ||
      i.value > std::numeric_limits<std::int32_t>::max()) {
    return error(key, "must be between -2147483648 and 2147483647, got " + describeValue(v));
  }
  out = static_cast<std::int32_t>(i.value);
  return Status::ok();
}

Status ArgsReader::readUint32(std::string_view key, std::optional<std::uint32_t>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  IntegerValue i = parseInteger(v);
  if (!i.ok || i.negative) return error(key, "must be a non-negative integer, got " + describeValue(v));
  // Upstream's field is a Go uint (64 bits): it takes any integer up to 18446744073709551615, which a
  // YAML integer beyond int64 still is (yaml_scalar.h reads anything larger as a float).
  const api::PlainScalar scalar = scalarOf(v);
  const bool uint64Integer = i.inRange || scalar.type == ScalarType::Int || scalar.real < 18446744073709551616.0;
  if (!uint64Integer) return error(key, "must be at most 18446744073709551615, got " + describeValue(v));
  // Every field read this way is a count or an age in seconds that no cluster reaches beyond
  // 4294967295 (136 years), so holding the largest value keeps upstream's meaning.
  constexpr std::uint32_t kMax = std::numeric_limits<std::uint32_t>::max();
  out = !i.inRange || i.value > kMax ? kMax : static_cast<std::uint32_t>(i.value);
  return Status::ok();
}

Status ArgsReader::readDouble(std::string_view key, std::optional<double>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  std::optional<double> d = parseNumber(v);
  if (!d) return error(key, "must be a number, got " + describeValue(v));
  // JSON has no infinities or NaN: upstream's YAML-to-JSON step rejects them.
  if (!std::isfinite(*d)) return error(key, "must be a finite number, got " + describeValue(v));
  out = *d;
  return Status::ok();
}

Status ArgsReader::readString(std::string_view key, std::optional<std::string>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  if (!isStringScalar(v)) return error(key, mustBeString(v));
  out = v.Scalar();
  return Status::ok();
}

Status ArgsReader::readStringList(std::string_view key, std::optional<std::vector<std::string>>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  if (!v.IsSequence()) return error(key, "must be a list of strings, got " + describeValue(v));
  std::vector<std::string> items;
  items.reserve(v.size());
  std::size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    YAML::Node item = *it;
    if (!isStringScalar(item)) return Status::error(pathOf(key) + "[" + std::to_string(i) + "]: " + mustBeString(item));
    items.push_back(item.Scalar());
  }
  out = std::move(items);
  return Status::ok();
}

Status ArgsReader::readInt32List(std::string_view key, std::optional<std::vector<std::int32_t>>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  if (!v.IsSequence()) return error(key, "must be a list of integers, got " + describeValue(v));
  std::vector<std::int32_t> items;
  items.reserve(v.size());
  std::size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    YAML::Node item = *it;
    IntegerValue n = parseInteger(item);
    if (!n.ok || !n.inRange || n.value < std::numeric_limits<std::int32_t>::min() ||
        n.value > std::numeric_limits<std::int32_t>::max()) {
      return Status::error(pathOf(key) + "[" + std::to_string(i) +
                           "]: must be an integer between -2147483648 and 2147483647, got " + describeValue(item));
    }
    items.push_back(static_cast<std::int32_t>(n.value));
  }
  out = std::move(items);
  return Status::ok();
}

Status ArgsReader::readDuration(std::string_view key, std::optional<double>& outSeconds) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  std::optional<double> seconds;
  if (v.IsScalar()) seconds = parseGoDuration(v.Scalar());
  if (!seconds) {
    return error(key, "must be a duration such as \"300ms\", \"1.5h\" or \"2h45m\", got " + describeValue(v));
  }
  outSeconds = *seconds;
  return Status::ok();
}

Status ArgsReader::readLabelSelector(std::string_view key, std::optional<api::LabelSelector>& out) {
  api::LabelSelector selector;
  bool present = false;
  Status st = readObject(
      key,
      [&](ArgsReader& r) -> Status {
        RawArgs labels;
        if (Status s = r.readRaw("matchLabels", labels); !s) return s;
        ArgsReader labelReader(labels);
        if (!labelReader.structural().isOk()) return labelReader.structural();
        if (const YAML::Node& map = detail::yamlOf(labels); !isUnset(map)) {
          for (auto it = map.begin(); it != map.end(); ++it) {
            std::string name = it->first.Scalar();
            YAML::Node value = it->second;
            if (!isStringScalar(value)) return labelReader.error(name, mustBeString(value));
            selector.matchLabels.emplace_back(name, value.Scalar());
          }
        }
        // Go maps have no order; sorting keeps toString() and comparisons deterministic.
        std::sort(selector.matchLabels.begin(), selector.matchLabels.end());
        return r.readObjectList("matchExpressions", [&](ArgsReader& e, std::size_t) -> Status {
          api::LabelSelectorRequirement req;
          std::optional<std::string> reqKey, op;
          std::optional<std::vector<std::string>> values;
          if (Status s = e.readString("key", reqKey); !s) return s;
          if (Status s = e.readString("operator", op); !s) return s;
          if (Status s = e.readStringList("values", values); !s) return s;
          static const char* const kOps = "must be one of In, NotIn, Exists, DoesNotExist";
          if (!op) return e.error("operator", std::string(kOps) + ", got null");
          Result<api::LabelSelectorOp> parsed = api::parseLabelSelectorOp(*op);
          // Gt/Lt exist only in the selector string syntax, never in a metav1.LabelSelector.
          if (!parsed || *parsed == api::LabelSelectorOp::Gt || *parsed == api::LabelSelectorOp::Lt) {
            return e.error("operator", std::string(kOps) + ", got " + quote(*op));
          }
          req.key = reqKey.value_or("");
          req.op = *parsed;
          req.values = values.value_or(std::vector<std::string>{});
          selector.matchExpressions.push_back(std::move(req));
          return Status::ok();
        });
      },
      &present);
  if (!st) return st;
  if (!present) return Status::ok();
  if (Status v = api::validateLabelSelector(selector); !v) {
    // The validator names the element ("matchExpressions[1].values: ..."): join it into the path.
    const std::string& msg = v.message();
    bool namesField = msg.starts_with("matchLabels") || msg.starts_with("matchExpressions");
    return Status::error(pathOf(key) + (namesField ? "." : ": ") + msg);
  }
  out = std::move(selector);
  return Status::ok();
}

Status ArgsReader::readNamespaces(std::string_view key, std::optional<Namespaces>& out) {
  Namespaces ns;
  bool present = false;
  Status st = readObject(
      key,
      [&](ArgsReader& r) -> Status {
        std::optional<std::vector<std::string>> include, exclude;
        if (Status s = r.readStringList("include", include); !s) return s;
        if (Status s = r.readStringList("exclude", exclude); !s) return s;
        ns.include = include.value_or(std::vector<std::string>{});
        ns.exclude = exclude.value_or(std::vector<std::string>{});
        // Upstream's wording, so operators can search for it.
        if (!ns.include.empty() && !ns.exclude.empty()) {
          return Status::error(r.path() + ": only one of Include/Exclude namespaces can be set");
        }
        return Status::ok();
      },
      &present);
  if (!st) return st;
  if (present) out = std::move(ns);
  return Status::ok();
}

Status ArgsReader::readResourceThresholds(std::string_view key, std::optional<ResourceThresholds>& out) {
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  ArgsReader r(detail::rawArgs(v, pathOf(key)));
  if (!r.structural().isOk()) return r.structural();
  ResourceThresholds thresholds;
  for (auto it = v.begin(); it != v.end(); ++it) {
    std::string resource = it->first.Scalar();
    std::optional<double> value;
    if (Status s = r.readDouble(resource, value); !s) return s;
    if (!value) return r.error(resource, "must be a number, got null");
    thresholds[resource] = *value;
  }
  out = std::move(thresholds);
  return Status::ok();
}

Status ArgsReader::readObject(std::string_view key, const std::function<Status(ArgsReader&)>& fn, bool* present) {
  if (present) *present = false;
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  ArgsReader sub(detail::rawArgs(v, pathOf(key)));
  if (!sub.structural().isOk()) return sub.structural();
  if (present) *present = true;
  try {
    if (Status s = fn(sub); !s) return s;
  } catch (const std::exception& e) {
    return Status::error(sub.path() + ": internal error while reading: " + e.what());
  }
  return sub.finish();
}

Status ArgsReader::readObjectList(std::string_view key, const std::function<Status(ArgsReader&, std::size_t)>& fn,
                                  bool* present) {
  if (present) *present = false;
  if (!structural_.isOk()) return structural_;
  YAML::Node v = get(key).node;
  if (isUnset(v)) return Status::ok();
  if (!v.IsSequence()) return error(key, "must be a list, got " + describeValue(v));
  if (present) *present = true;
  std::size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    ArgsReader item(detail::rawArgs(*it, pathOf(key) + "[" + std::to_string(i) + "]"));
    if (!item.structural().isOk()) return item.structural();
    try {
      if (Status s = fn(item, i); !s) return s;
    } catch (const std::exception& e) {
      return Status::error(item.path() + ": internal error while reading: " + e.what());
    }
    if (Status s = item.finish(); !s) return s;
  }
  return Status::ok();
}

Status ArgsReader::readRaw(std::string_view key, RawArgs& out) {
  if (!structural_.isOk()) return structural_;
  out = detail::rawArgs(get(key).node, pathOf(key));
  return Status::ok();
}

Status ArgsReader::finish() {
  std::vector<std::string> unknown;
  if (Status s = unknownKeys(unknown); !s) return s;
  if (unknown.empty()) return Status::ok();
  const std::string& key = unknown.front();
  std::string message = "unknown field " + quote(key);
  std::string suggestion = closestMatch(key, known_);
  if (!suggestion.empty()) {
    message += " (did you mean " + quote(suggestion) + "?)";
  } else if (known_.empty()) {
    message += " (this object takes no fields)";
  } else {
    message += " (known fields: ";
    for (std::size_t i = 0; i < known_.size(); ++i) message += (i ? ", " : "") + known_[i];
    message += ")";
  }
  return error(key, message);
}

Status ArgsReader::finishLenient(const std::vector<std::string_view>& guarded, std::size_t maxTypo,
                                 std::vector<IgnoredKey>& ignored) {
  std::vector<std::string> unknown;
  if (Status s = unknownKeys(unknown); !s) return s;
  for (const std::string& key : unknown) {
    if (std::string_view g = guardedNearMiss(key, guarded, maxTypo); !g.empty())
      return error(key, "unknown field " + quote(key) + " (did you mean " + quote(g) + "?)");
  }
  for (std::string& key : unknown) {
    ignored.push_back({key, closestMatch(key, known_)});
    ignored_.push_back(std::move(key));
  }
  return Status::ok();
}

Status ArgsReader::unknownKeys(std::vector<std::string>& out) const {
  if (!structural_.isOk()) return structural_;
  const YAML::Node& node = detail::yamlOf(args_);
  if (isUnset(node)) return Status::ok();
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string key = it->first.Scalar();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    if (std::find(ignored_.begin(), ignored_.end(), key) != ignored_.end()) continue;
    if (args_.pluginArgs && (key == "apiVersion" || key == "kind")) continue;
    if (key == "<<") return error(key, "YAML merge keys are not supported: write the fields out in full");
    out.push_back(std::move(key));
  }
  return Status::ok();
}

std::optional<double> parseDuration(std::string_view text) { return parseGoDuration(text); }

}  // namespace kdesched::policy
