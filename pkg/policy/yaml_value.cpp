#include "pkg/policy/detail/yaml_value.h"

#include <exception>
#include <memory>
#include <utility>

#include "pkg/api/yaml_scan.h"
#include "pkg/base/utf8.h"

namespace kdesched::policy {

bool RawArgs::isSet() const { return value && !detail::isUnset(value->node); }

Result<RawArgs> RawArgs::fromYaml(std::string_view yaml, std::string path) {
  try {
    std::string text(yaml);
    // Scan first: yaml-cpp 0.7's loaders can loop forever on malformed input (see yaml_scan.h).
    api::YamlScan scan = api::scanYaml(text);
    if (scan.stuck) {
      return Status::error(path + ": invalid YAML at line " + std::to_string(scan.stuckAt.line + 1) + ", column " +
                           std::to_string(scan.stuckAt.column + 1) + ": unexpected token at the start of a document");
    }
    return detail::rawArgs(YAML::Load(text), std::move(path));
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Status::error(path + ": invalid YAML: " + e.msg);
    return Status::error(path + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                         std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return Status::error(path + ": invalid YAML: " + e.what());
  }
}

namespace detail {

RawArgs rawArgs(YAML::Node node, std::string path) {
  return RawArgs{std::make_shared<const YamlValue>(YamlValue{std::move(node)}), std::move(path)};
}

const YAML::Node& yamlOf(const RawArgs& raw) {
  static const YAML::Node* const kNone = new YAML::Node(YAML::NodeType::Undefined);
  return raw.value ? raw.value->node : *kNone;
}

bool isUnset(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

api::PlainScalar scalarOf(const YAML::Node& n) {
  api::PlainScalar s;
  if (isUnset(n)) {
    s.type = api::ScalarType::Null;
    return s;
  }
  if (!n.IsScalar() || !api::isResolvedTag(n.Tag())) return s;  // String
  return api::resolvePlainScalar(n.Scalar());
}

std::string quote(std::string_view s, std::size_t maxBytes) {
  const bool utf8 = utf8::valid(s);
  const bool cut = s.size() > maxBytes;
  if (cut) {
    s = s.substr(0, maxBytes);
    // Do not split a UTF-8 sequence: drop a trailing incomplete one.
    if (utf8) {
      std::size_t lead = s.size();
      while (lead > 0 && s.size() - lead < 4 && (static_cast<unsigned char>(s[lead - 1]) & 0xC0) == 0x80) --lead;
      if (lead > 0) {
        auto c = static_cast<unsigned char>(s[lead - 1]);
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
        if (lead - 1 + len > s.size()) s = s.substr(0, lead - 1);
      }
    }
  }
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
          static const char* const kHex = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += ch;
        }
    }
  }
  out += cut ? "...\"" : "\"";
  return out;
}

std::string describeValue(const YAML::Node& value) {
  if (isUnset(value)) return "null";
  switch (value.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar:
      if (scalarOf(value).type == api::ScalarType::String) return quote(value.Scalar());
      {
        // Numbers and booleans read as written; quote() still escapes and cuts them.
        std::string q = quote(value.Scalar());
        return q.substr(1, q.size() - 2);
      }
    default: return "null";
  }
}

std::string lineOf(const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  return m.is_null() ? std::string("?") : std::to_string(m.line + 1);
}

}  // namespace detail
}  // namespace kdesched::policy
