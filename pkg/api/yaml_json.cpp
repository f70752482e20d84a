#include "pkg/api/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <exception>
#include <optional>
#include <unordered_set>

#include "pkg/api/yaml_scalar.h"
#include "pkg/api/yaml_scan.h"
#include "pkg/base/utf8.h"

namespace kdesched::api {
namespace {

constexpr int kMaxYamlDepth = 512;
// Aliases let a few hundred bytes of YAML expand to gigabytes ("billion laughs"): the JSON may grow
// to 16 times the YAML, and to 8 MiB whatever the input, no further (go-yaml refuses such
// documents too, as "excessive aliasing").
constexpr std::size_t kMinExpansionLimit = std::size_t{8} << 20;
constexpr std::size_t kExpansionFactor = 16;

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

// The JSON for a plain scalar as sigs.k8s.io/yaml writes it; nullopt means "a string". Errors for
// values YAML can type but JSON cannot hold.
Result<std::optional<std::string>> plainJson(std::string_view s) {
  using Json = std::optional<std::string>;
  const PlainScalar v = resolvePlainScalar(s);
  switch (v.type) {
    case ScalarType::Null: return Json("null");
    case ScalarType::Bool: return Json(v.boolean ? "true" : "false");
    case ScalarType::Int: return Json(v.aboveInt64 ? std::to_string(v.uint64) : std::to_string(v.int64));
    case ScalarType::Float: {
      if (v.outOfRange) return Json();  // strconv.ParseFloat fails, so upstream keeps the text
      if (!std::isfinite(v.real)) return Status::error("\"" + std::string(s) + "\" is not representable in JSON");
      // The shortest text that reads back as the same double, as Go's encoder writes floats.
      std::array<char, 64> buf{};
      const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v.real);
      return Json(std::string(buf.data(), res.ptr));
    }
    case ScalarType::String: return Json();
  }
  return Json();
}

class YamlToJson {
 public:
  explicit YamlToJson(std::size_t limit) : limit_(limit) {}

  Status emit(const YAML::Node& node, std::string& out, int depth) {
    if (depth > kMaxYamlDepth) return failAt(node, "nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels");
    if (out.size() > limit_)
      return Status::error("the document contains excessive aliasing: it expands beyond " + std::to_string(limit_) +
                           " bytes of JSON");
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

  // yaml-cpp passes bytes that are not UTF-8 through into scalars, and JSON cannot carry them
  // (go-yaml refuses such text too).
  static Status checkUtf8(const YAML::Node& node, std::string_view text) {
    if (utf8::valid(text)) return Status::ok();
    return failAt(node, "text that is not UTF-8");
  }

  Status emitScalar(const YAML::Node& node, std::string& out) {
    const std::string& text = node.Scalar();
    KD_TRY(checkUtf8(node, text));
    if (isResolvedTag(node.Tag())) {
      auto r = plainJson(text);
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
    KD_TRY(checkUtf8(key, out));
    if (isResolvedTag(key.Tag())) {
      // A plain "<<" key merges a mapping into this one in YAML 1.1 (a quoted one is a key).
      if (out == "<<") return failAt(key, "YAML merge keys (<<) are not supported");
      auto r = plainJson(out);
      if (!r.isOk()) return failAt(key, r.error());
      if (*r) out = **r;
    }
    return Status::ok();
  }

  std::size_t limit_;
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
    YamlToJson converter(std::max(kMinExpansionLimit, kExpansionFactor * yaml.size()));
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
