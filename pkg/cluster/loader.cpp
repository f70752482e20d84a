#include "pkg/cluster/loader.h"

#include <simdjson.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "pkg/api/detail/ondemand.h"
#include "pkg/api/yaml_json.h"

namespace kdesched::cluster {
namespace {

namespace od = simdjson::ondemand;

struct Decoded {
  std::vector<api::Object> objects;
  LoadReport report;
};

std::string describe(simdjson::error_code e) { return simdjson::error_message(e); }

// "PodList" → "Pod"; the item kind of a typed list when items omit their own kind.
std::string itemKindOfList(std::string_view listKind) {
  if (listKind.size() > 4 && listKind.substr(listKind.size() - 4) == "List" && listKind != "List")
    return std::string(listKind.substr(0, listKind.size() - 4));
  return "";
}

Status decodeItem(od::object item, const std::string& defaultKind, const std::string& where, Decoded& out) {
  std::string kind = defaultKind;
  std::string_view k;
  auto kf = item.find_field_unordered("kind");
  if (kf.error() == simdjson::SUCCESS) {
    if (auto e = kf.get_string().get(k); e) return Status::error(where + ".kind: must be a string");
    kind = std::string(k);
  } else if (kf.error() != simdjson::NO_SUCH_FIELD) {
    return Status::error(where + ": malformed JSON: " + describe(kf.error()));
  }
  if (auto e = item.reset().error(); e) return Status::error(where + ": malformed JSON: " + describe(e));
  if (kind.empty()) return Status::error(where + ": object has no kind");
  api::Kind kd = api::kindFromString(kind);
  if (kd == api::Kind::Unknown) {
    ++out.report.skipped[kind];
    return Status::ok();
  }
  api::Object obj;
  Status st = api::decodeObject(kd, item, obj);
  if (!st.isOk()) {
    // Name the object when its metadata made it through.
    std::string id;
    std::visit(
        [&](const auto& o) {
          if constexpr (requires { o.ns; }) {
            if (!o.name.empty()) id = " " + o.ns.str() + "/" + o.name;
          } else {
            if (!o.name.empty()) id = " " + o.name;
          }
        },
        obj);
    return Status::error(where + " (" + kind + id + "): " + st.message());
  }
  ++out.report.loaded[std::string(api::toString(kd))];
  out.objects.push_back(std::move(obj));
  return Status::ok();
}

Status decodeList(od::array items, const std::string& defaultKind, const std::string& where, Decoded& out) {
  std::size_t i = 0;
  for (auto element : items) {
    std::string at = where + "[" + std::to_string(i++) + "]";
    od::object item;
    if (auto e = element.get_object().get(item); e) return Status::error(at + ": must be an object");
    Status st = decodeItem(item, defaultKind, at, out);
    if (!st.isOk()) return st;
  }
  return Status::ok();
}

// One JSON document: a list with items, a single object, or an array of objects.
Status decodeJsonDocument(std::string_view json, const std::string& where, Decoded& out) {
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc); e) return Status::error(where + ": not valid JSON: " + describe(e));
  od::json_type type;
  if (auto e = doc.type().get(type); e) return Status::error(where + ": not valid JSON: " + describe(e));
  if (type == od::json_type::array) {
    od::array arr;
    if (auto e = doc.get_array().get(arr); e) return Status::error(where + ": not valid JSON: " + describe(e));
    return decodeList(arr, "", where, out);
  }
  if (type != od::json_type::object)
    return Status::error(where + ": expected a JSON object or array (a v1 List, as kubectl -o json writes)");
  od::object obj;
  if (auto e = doc.get_object().get(obj); e) return Status::error(where + ": not valid JSON: " + describe(e));
  // A list has "items"; find it without assuming field order.
  std::string_view kind;
  bool hasKind = false;
  auto kf = obj.find_field_unordered("kind");
  if (kf.error() == simdjson::SUCCESS) {
    hasKind = kf.get_string().get(kind) == simdjson::SUCCESS;
  } else if (kf.error() != simdjson::NO_SUCH_FIELD) {
    // The iterator is unusable after a syntax error: using it again (reset) is undefined behaviour.
    return Status::error(where + ": not valid JSON: " + describe(kf.error()));
  }
  std::string kindStr(kind);
  if (auto e = obj.reset().error(); e) return Status::error(where + ": not valid JSON: " + describe(e));
  auto itemsField = obj.find_field_unordered("items");
  if (itemsField.error() == simdjson::SUCCESS) {
    od::array arr;
    if (auto e = itemsField.get_array().get(arr); e) return Status::error(where + ".items: must be an array");
    return decodeList(arr, itemKindOfList(kindStr), where + ".items", out);
  }
  if (itemsField.error() != simdjson::NO_SUCH_FIELD)
    return Status::error(where + ": not valid JSON: " + describe(itemsField.error()));
  if (hasKind && (kindStr == "List" || !itemKindOfList(kindStr).empty())) return Status::ok();  // empty list
  if (auto e = obj.reset().error(); e) return Status::error(where + ": not valid JSON: " + describe(e));
  return decodeItem(obj, "", where, out);
}

}  // namespace

Result<LoadReport> loadSnapshot(std::string_view text, const std::string& sourceName, Store& store) {
  Decoded out;
  out.report.bytes = text.size();
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    return Status::error(sourceName + ": binary data (a NUL byte at offset " + std::to_string(nul) +
                         "): expected the JSON or YAML that kubectl get -o json|yaml writes");
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Status::error(sourceName + ": the file is empty");

  if (text[first] == '{' || text[first] == '[') {
    Status st = decodeJsonDocument(text, "document", out);
    if (!st.isOk()) return st.prefix(sourceName);
  } else {
    auto docs = api::yamlStreamToJson(text);
    if (!docs.isOk()) return Status::error(sourceName + ": " + docs.error());
    if (docs->empty()) return Status::error(sourceName + ": the file has no YAML document");
    for (std::size_t i = 0; i < docs->size(); ++i) {
      Status st = decodeJsonDocument((*docs)[i], "document[" + std::to_string(i) + "]", out);
      if (!st.isOk()) return st.prefix(sourceName);
    }
  }

  std::unordered_set<std::string> nodeNames;
  for (const auto& o : out.objects)
    if (auto* n = std::get_if<api::Node>(&o)) nodeNames.insert(n->name);
  std::size_t orphans = 0;
  for (const auto& o : out.objects) {
    const auto* p = std::get_if<api::Pod>(&o);
    if (p && !p->nodeName.empty() && !nodeNames.count(p->nodeName.str())) {
      ++orphans;
      if (out.report.warnings.size() < 20)
        out.report.warnings.push_back("pod " + p->key() + " is bound to node " + p->nodeName.str() +
                                      ", which is not in the snapshot: no strategy considers it");
    }
  }
  if (orphans > 20)
    out.report.warnings.push_back(std::to_string(orphans - 20) +
                                  " more pods are bound to nodes missing from the snapshot");
  if (orphans) out.report.skipped["Pod on an unknown node"] = orphans;

  for (auto& o : out.objects) store.upsert(std::move(o));
  return std::move(out.report);
}

Result<LoadReport> loadSnapshotFile(const std::string& path, Store& store, std::size_t maxBytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::error(path + ": is a directory; --snapshot takes a file (kubectl get ... -o json > FILE)");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(path + ": cannot open the snapshot file: " + std::strerror(errno ? errno : ENOENT));
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (text.size() + static_cast<std::size_t>(in.gcount()) > maxBytes)
      return Status::error(path + ": larger than " + std::to_string(maxBytes) +
                           " bytes; raise --max-snapshot-bytes if this snapshot is real");
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return Status::error(path + ": cannot read the snapshot file: " + std::strerror(errno ? errno : EIO));
  return loadSnapshot(text, path, store);
}

}  // namespace kdesched::cluster
