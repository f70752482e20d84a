// Strict decoding of plugin args from YAML with field paths: unknown keys are errors with a
// did-you-mean, duplicate keys are errors, type errors name the field and the bad value.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/base/status.h"
#include "pkg/policy/did_you_mean.h"
#include "pkg/policy/policy.h"

namespace kdesched::policy {

// `namespaces: {include: [...], exclude: [...]}` shared by many plugins.
struct Namespaces {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool operator==(const Namespaces&) const = default;
  // True when a pod in `ns` passes this filter (include list, or not excluded).
  bool allows(std::string_view ns) const;
};

// Resource name → percentage, as upstream's ResourceThresholds.
using ResourceThresholds = std::map<std::string, double>;

// Reads one YAML mapping strictly. Every accessor marks its key as known; finish() then reports
// keys nobody asked for. A null/absent node reads as an empty mapping.
//
// Values are typed the way upstream reads them (YAML converted to JSON by sigs.k8s.io/yaml): a
// plain `5`, `true` or `null` is a number, a boolean or null, a quoted "5" is a string. A key whose
// value is null counts as not set (Go's nil pointer) and leaves `out` unchanged, as does an absent
// key. Accessors never throw.
class ArgsReader {
 public:
  // Reads `raw` (unset args read as an empty mapping). A reader of `RawArgs{.path = p}` reads
  // nothing and only names fields under `p` in errors.
  explicit ArgsReader(const RawArgs& raw);

  // The node was not a mapping (or had duplicate keys): every accessor then returns this error.
  const Status& structural() const { return structural_; }

  Status readBool(std::string_view key, std::optional<bool>& out);
  Status readInt64(std::string_view key, std::optional<std::int64_t>& out);
  Status readInt32(std::string_view key, std::optional<std::int32_t>& out);
  Status readUint32(std::string_view key, std::optional<std::uint32_t>& out);  // negative → error
  Status readDouble(std::string_view key, std::optional<double>& out);
  Status readString(std::string_view key, std::optional<std::string>& out);
  Status readStringList(std::string_view key, std::optional<std::vector<std::string>>& out);
  Status readInt32List(std::string_view key, std::optional<std::vector<std::int32_t>>& out);  // exitCodes
  // A Go duration string ("5m", "1h30m", "90s", "300ms") → seconds.
  Status readDuration(std::string_view key, std::optional<double>& outSeconds);
  Status readLabelSelector(std::string_view key, std::optional<api::LabelSelector>& out);
  Status readNamespaces(std::string_view key, std::optional<Namespaces>& out);
  Status readResourceThresholds(std::string_view key, std::optional<ResourceThresholds>& out);
  // A nested mapping read by `fn` with its own strict reader; absent key → fn not called, present
  // = true in `present`.
  Status readObject(std::string_view key, const std::function<Status(ArgsReader&)>& fn, bool* present = nullptr);
  // A list of mappings, each read by fn(reader, index).
  // Both readObject and readObjectList call finish() on the nested reader after fn succeeds, so a
  // typo inside a nested object is reported even when fn forgets to.
  Status readObjectList(std::string_view key, const std::function<Status(ArgsReader&, std::size_t)>& fn,
                        bool* present = nullptr);
  // The value unchecked, at path `<path>.<key>`, for values decoded later by someone else (such as
  // plugin args). Absent → unset raw args.
  Status readRaw(std::string_view key, RawArgs& out);

  // True when `key` is present with a non-null value.
  bool has(std::string_view key) const;
  // Unknown keys → `<path>.<key>: unknown field "<key>"` plus ` (did you mean "<known>"?)` when a
  // known key is within edit distance 3, otherwise ` (known fields: a, b, c)`.
  Status finish();
  // As upstream reads a policy's top level: an unknown key is ignored and named in `ignored`,
  // except one within edit distance `maxTypo` of a known key, which stays an error with the
  // did-you-mean (a misspelt limit would otherwise be dropped silently and evict more).
  Status finishLenient(std::size_t maxTypo, std::vector<std::string>& ignored);

  // An error at `<path>.<key>`: "<path>.<key>: <message>".
  Status error(std::string_view key, const std::string& message) const;
  std::string pathOf(std::string_view key) const;
  const std::string& path() const { return args_.path; }

 private:
  // The keys of the mapping nobody asked for, in order; a merge key ("<<") is an error.
  Status unknownKeys(std::vector<std::string>& out) const;
  // The value under `key` (an undefined node when absent); marks `key` as known.
  detail::YamlValue get(std::string_view key);
  RawArgs args_;
  Status structural_;
  std::vector<std::string> known_;
};

// A Go duration ("5m", "1h30m", "2s", "300ms", "0") in seconds; nullopt when malformed. Used for
// duration flags too, so upstream's flag values keep working.
std::optional<double> parseDuration(std::string_view text);

}  // namespace kdesched::policy
