#include "pkg/api/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <unordered_set>

#include "pkg/api/yaml_scan.h"

namespace kdesched::api {
// Plain scalars are typed the way sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) does.

namespace {

constexpr int kMaxYamlDepth = 512;

void appendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (u < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

bool isOneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

// strconv.ParseInt/ParseUint with base 0: optional sign (signed only), then 0x/0o/0b prefixes or a
// leading 0 for octal, else decimal. Returns the value as JSON integer text.
std::optional<std::string> goBaseZeroInt(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    if (p == 'x') base = 16;
    if (p == 'o') base = 8;
    if (p == 'b') base = 2;
    if (base != 10) {
      s.remove_prefix(2);
    } else {
      base = 8;  // "0755"
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  // Signed range for negatives (ParseInt); up to uint64 for non-negatives (ParseUint fallback).
  if (negative) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) return std::nullopt;
    return v == 0 ? std::string("0") : "-" + std::to_string(v);
  }
  return std::to_string(v);
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (go-yaml's yamlStyleFloat).
bool isYamlStyleFloat(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// The shortest text that reads back as the same double, as Go's encoder writes floats.
std::optional<std::string> floatJson(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double d = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  return std::string(buf.data(), res.ptr);
}

// The JSON for a plain (unquoted, untagged) scalar; nullopt means "a string". Errors for values
// YAML can type but JSON cannot hold.
Result<std::optional<std::string>> resolvePlain(std::string_view s) {
  using Resolved = std::optional<std::string>;
  if (isOneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) return Resolved("true");
  if (isOneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    return Resolved("false");
  }
  if (isOneOf(s, {"", "~", "null", "Null", "NULL"})) return Resolved("null");
  if (isOneOf(s,
              {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"})) {
    return Status::error("\"" + std::string(s) + "\" is not representable in JSON");
  }
  if (s == "<<") return Status::error("YAML merge keys (<<) are not supported");
  const char first = s.front();
  if (first == '.') {
    if (isYamlStyleFloat(s)) return Resolved(floatJson(s));
    return Resolved();
  }
  if (!((first >= '0' && first <= '9') || first == '+' || first == '-')) return Resolved();
  std::string plain(s);
  std::erase(plain, '_');
  if (auto i = goBaseZeroInt(plain)) return Resolved(std::move(i));
  if (isYamlStyleFloat(plain)) return Resolved(floatJson(plain));
  return Resolved();
}

class YamlToJson {
 public:
  Status emit(const YAML::Node& node, std::string& out, int depth) {
    if (depth > kMaxYamlDepth) return failAt(node, "nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: out += "null"; return Status::ok();
      case YAML::NodeType::Scalar: return emitScalar(node, out);
      case YAML::NodeType::Sequence: {
        out += '[';
        bool first = true;
        for (const auto& item : node) {
          if (!first) out += ',';
          first = false;
          KD_TRY(emit(item, out, depth + 1));
        }
        out += ']';
        return Status::ok();
      }
      case YAML::NodeType::Map: {
        out += '{';
        // yaml-cpp keeps repeated keys as separate pairs; YAML forbids them and so does kubectl.
        std::unordered_set<std::string> seen;
        bool first = true;
        for (const auto& kv : node) {
          std::string key;
          KD_TRY(keyText(kv.first, key));
          if (!seen.insert(key).second) return failAt(kv.first, "duplicate key \"" + key + "\"");
          if (!first) out += ',';
          first = false;
          appendJsonString(out, key);
          out += ':';
          KD_TRY(emit(kv.second, out, depth + 1));
        }
        out += '}';
        return Status::ok();
      }
    }
    return failAt(node, "unsupported YAML node");
  }

 private:
  static Status failAt(const YAML::Node& node, const std::string& what) {
    const YAML::Mark m = node.Mark();
    if (m.is_null()) return Status::error(what);
    return Status::error("line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) + ": " +
                         what);
  }

  // "?" marks a plain scalar (typed by resolution), "!" a quoted or block scalar (a string).
  static bool resolvable(const std::string& tag) {
    return tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
           tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null";
  }

  Status emitScalar(const YAML::Node& node, std::string& out) {
    const std::string& text = node.Scalar();
    if (resolvable(node.Tag())) {
      auto r = resolvePlain(text);
      if (!r.isOk()) return failAt(node, r.error());
      if (*r) {
        out += **r;
        return Status::ok();
      }
    }
    appendJsonString(out, text);
    return Status::ok();
  }

  // JSON keys are strings: a plain key that YAML types (true, 16, null) is written as that value's text.
  Status keyText(const YAML::Node& key, std::string& out) {
    if (key.IsNull()) {
      out = "null";
      return Status::ok();
    }
    if (!key.IsScalar()) return failAt(key, "mapping keys must be scalars");
    out = key.Scalar();
    if (resolvable(key.Tag())) {
      auto r = resolvePlain(out);
      if (!r.isOk()) return failAt(key, r.error());
      if (*r) out = **r;
    }
    return Status::ok();
  }
};

Result<std::vector<std::string>> convertYaml(std::string_view yaml) {
  try {
    std::string text(yaml);
    // Scan first: yaml-cpp 0.7's LoadAll can loop forever on malformed input (see yaml_scan.h).
    YamlScan scan = scanYaml(text);
    if (scan.stuck)
      return Status::error("invalid YAML at line " + std::to_string(scan.stuckAt.line + 1) + ", column " +
                           std::to_string(scan.stuckAt.column + 1) + ": unexpected token at the start of a document");
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    std::vector<std::string> out;
    out.reserve(docs.size());
    YamlToJson converter;
    for (const auto& doc : docs) {
      if (doc.IsNull()) continue;  // "---" with nothing after it
      std::string json;
      json.reserve(yaml.size());
      KD_TRY(converter.emit(doc, json, 0));
      out.push_back(std::move(json));
    }
    return out;
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Status::error("invalid YAML: " + e.msg);
    return Status::error("invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                         std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return Status::error(std::string("invalid YAML: ") + e.what());
  }
}

}  // namespace

Result<std::string> yamlDocumentToJson(std::string_view yaml) {
  auto docs = convertYaml(yaml);
  if (!docs.isOk()) return docs.status();
  if (docs->empty()) return std::string("null");
  if (docs->size() > 1) return Status::error("expected one YAML document, found " + std::to_string(docs->size()));
  return std::move(docs->front());
}

Result<std::vector<std::string>> yamlStreamToJson(std::string_view yaml) { return convertYaml(yaml); }

}  // namespace kdesched::api
