#include "pkg/cluster/loader.h"

#include <simdjson.h>

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "pkg/api/detail/ondemand.h"
#include "pkg/api/json_scan.h"
#include "pkg/api/names.h"
#include "pkg/api/text_input.h"
#include "pkg/api/yaml_json.h"
#include "pkg/cluster/input_buffer.h"
#include "pkg/usage/detail/ondemand.h"

namespace kdesched::cluster {
namespace {

namespace od = simdjson::ondemand;

// A decoded object as the store keeps it: made shared as soon as it is decoded, so that moving it
// into the store copies nothing (at S3 the moved-from objects held 75 MB until the load ended).
using SharedObject = std::variant<PodPtr, NodePtr, PdbPtr, NamespacePtr, PriorityClassPtr, PvcPtr>;

struct Decoded {
  std::vector<SharedObject> objects;
  // "Pod default/web" → where it was read, so a second copy is named with the first.
  std::unordered_map<std::string, std::string> seen;
  LoadReport report;
  usage::SourceReadings* metrics = nullptr;  // where NodeMetrics/PodMetrics go; null: skipped
  // Bytes readable from the start of the text: simdjson reads up to 64 past a value's end.
  const char* readableEnd = nullptr;
  // Called with the end of each decoded item: the text before it is not read again.
  std::function<void(const char*)> release;
  od::parser itemParser;         // one item at a time: its buffers are as big as the largest item
  const Store* store = nullptr;  // what it keeps of each object (Store::trim)
};

std::string describe(simdjson::error_code e) { return simdjson::error_message(e); }

// "PodList" → "Pod"; the item kind of a typed list when items omit their own kind.
std::string itemKindOfList(std::string_view listKind) {
  if (listKind.size() > 4 && listKind.substr(listKind.size() - 4) == "List" && listKind != "List")
    return std::string(listKind.substr(0, listKind.size() - 4));
  return "";
}

// "Pod default/web", "Node n1", or the kind alone when the metadata did not make it through.
std::string describe(const std::string& kind, const api::Object& obj) {
  return std::visit(
      [&](const auto& o) -> std::string {
        if (o.name.empty()) return kind;
        if constexpr (requires { o.ns; }) {
          if (!o.ns.view().empty()) return kind + " " + o.ns.str() + "/" + o.name;
        }
        return kind + " " + o.name;
      },
      obj);
}

// Each object once, as the API server keeps it: a second copy is an error naming both places.
Status checkOnce(const std::string& identity, const std::string& where, Decoded& out) {
  if (auto [first, fresh] = out.seen.try_emplace(identity, where); !fresh)
    return Status::error(where + " (" + identity + "): the same object as " + first->second +
                         "; a snapshot holds each object once");
  return Status::ok();
}

Status decodeMetricsItem(od::object item, const std::string& kind, const std::string& where, Decoded& out) {
  auto failed = [&](const std::string& identity, const Status& st) {
    return Status::error(where + " (" + identity + "): " + st.message());
  };
  if (kind == "NodeMetrics") {
    usage::detail::NodeMetricsItem n;
    Status st = usage::detail::decodeNodeMetrics(item, n);
    const std::string identity = kind + " " + n.name;
    if (st.isOk() && n.name.empty()) st = Status::error("metadata.name: missing");
    if (!st.isOk()) return failed(identity, st);
    KD_TRY(checkOnce(identity, where, out));
    usage::detail::add(std::move(n), *out.metrics);
  } else {
    usage::detail::PodMetricsItem p;
    Status st = usage::detail::decodePodMetrics(item, p);
    const std::string identity = kind + " " + p.ns + "/" + p.name;
    if (st.isOk() && (p.name.empty() || p.ns.empty()))
      st = Status::error("metadata.name and metadata.namespace: required");
    if (!st.isOk()) return failed(identity, st);
    KD_TRY(checkOnce(identity, where, out));
    usage::detail::add(p, *out.metrics);
  }
  ++out.report.loaded[kind];
  return Status::ok();
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
  if (out.metrics && (kind == "NodeMetrics" || kind == "PodMetrics")) return decodeMetricsItem(item, kind, where, out);
  api::Kind kd = api::kindFromString(kind);
  if (kd == api::Kind::Unknown) {
    ++out.report.skipped[kind];
    return Status::ok();
  }
  api::Object obj;
  Status st = api::decodeObject(kd, item, obj);
  if (st.isOk()) st = api::validateObjectNames(obj);
  if (!st.isOk()) return Status::error(where + " (" + describe(kind, obj) + "): " + st.message());
  // The API server keeps one object per kind, namespace and name; silently keeping the last of
  // two copies could hide the one that breaks a rule.
  KD_TRY(checkOnce(describe(std::string(api::toString(kd)), obj), where, out));
  ++out.report.loaded[std::string(api::toString(kd))];
  if (out.store) out.store->trim(obj);
  out.objects.push_back(std::visit(
      [](auto&& o) -> SharedObject { return std::make_shared<const std::decay_t<decltype(o)>>(std::move(o)); },
      std::move(obj)));
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

// The items of a list the scanner found, each parsed on its own (in place when the text is padded
// enough past it): parsing a whole S3 document at once took 200 MB of simdjson buffers.
Status decodeSpans(std::string_view text, const std::vector<api::JsonSpan>& elements, const std::string& defaultKind,
                   const std::string& where, Decoded& out) {
  simdjson::padded_string copy;
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const char* begin = text.data() + elements[i].begin;
    const std::size_t len = elements[i].end - elements[i].begin;
    simdjson::padded_string_view view(begin, len, static_cast<std::size_t>(out.readableEnd - begin));
    if (begin + len + simdjson::SIMDJSON_PADDING > out.readableEnd) {
      copy = simdjson::padded_string(begin, len);
      view = copy;
    }
    od::document doc;
    od::object item;
    if (auto e = out.itemParser.iterate(view).get(doc); e)
      return Status::error(at + ": not valid JSON: " + describe(e));
    if (auto e = doc.get_object().get(item); e) return Status::error(at + ": must be an object");
    KD_TRY(decodeItem(item, defaultKind, at, out));
    if (out.release) out.release(begin + len);
  }
  return Status::ok();
}

// One JSON document: a list with items, a single object, or an array of objects. With `items`,
// the document's list (the root array, or its "items") was cut out of `json` and is decoded from
// those spans of `text`.
Status decodeJsonDocument(std::string_view json, const std::string& where, Decoded& out, std::string_view text = {},
                          const api::JsonItems* items = nullptr) {
  auto decodeItems = [&](od::array arr, const std::string& defaultKind, const std::string& at) {
    return items ? decodeSpans(text, items->elements, defaultKind, at, out) : decodeList(arr, defaultKind, at, out);
  };
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc); e) return Status::error(where + ": not valid JSON: " + describe(e));
  od::json_type type;
  if (auto e = doc.type().get(type); e) return Status::error(where + ": not valid JSON: " + describe(e));
  if (type == od::json_type::array) {
    od::array arr;
    if (auto e = doc.get_array().get(arr); e) return Status::error(where + ": not valid JSON: " + describe(e));
    return decodeItems(arr, "", where);
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
    return decodeItems(arr, itemKindOfList(kindStr), where + ".items");
  }
  if (itemsField.error() != simdjson::NO_SUCH_FIELD)
    return Status::error(where + ": not valid JSON: " + describe(itemsField.error()));
  if (hasKind && (kindStr == "List" || !itemKindOfList(kindStr).empty())) return Status::ok();  // empty list
  if (auto e = obj.reset().error(); e) return Status::error(where + ": not valid JSON: " + describe(e));
  return decodeItem(obj, "", where, out);
}

// Flow-style YAML larger than this is not tried (hand-written YAML is far smaller).
constexpr std::size_t kMaxFlowStyleBytes = std::size_t{16} << 20;

// A YAML stream: every document, each a list, an object or an array.
Status decodeYamlText(std::string_view text, Decoded& out) {
  // yaml-cpp passes bytes that are not UTF-8 through (into comments, or as "not valid JSON" later):
  // name the first one where it is.
  if (auto bad = api::firstInvalidUtf8(text))
    return Status::error(api::textPosition(text, *bad) + ": text that is not UTF-8: the file must be UTF-8");
  auto docs = api::yamlStreamToJson(text);
  if (!docs.isOk()) return docs.status();
  if (docs->empty()) return Status::error("the file has no YAML document");
  for (std::size_t i = 0; i < docs->size(); ++i)
    KD_TRY(decodeJsonDocument((*docs)[i], "document[" + std::to_string(i) + "]", out));
  return Status::ok();
}

// JSON: one document or several concatenated (cat a.json b.json), every byte checked first. A
// text that breaks off at a bare word where JSON needs a quote is YAML's flow style
// ({kind: List, items: [...]}), which kubectl reads too.
Status decodeText(std::string_view text, Decoded& out) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (text[first] != '{' && text[first] != '[') return decodeYamlText(text, out);
  const api::JsonScan scan = api::scanJsonStream(text);
  if (scan.error) {
    const std::string json = api::textPosition(text, scan.error->offset) + ": not valid JSON: " + scan.error->message;
    // yaml-cpp reads ~10 MB/s: a large broken JSON file is not worth a minute of trying it as YAML.
    if (!scan.error->unquotedWord || text.size() > kMaxFlowStyleBytes) return Status::error(json);
    Decoded yaml;
    yaml.metrics = out.metrics;
    yaml.store = out.store;
    Status st = decodeYamlText(text, yaml);
    if (!st.isOk()) return Status::error(json + " (nor YAML: " + st.message() + ")");
    out = std::move(yaml);
    return Status::ok();
  }
  const bool several = scan.documents.size() > 1;
  for (std::size_t i = 0; i < scan.documents.size(); ++i) {
    const api::JsonSpan& doc = scan.documents[i];
    const std::string where = several ? "document[" + std::to_string(i) + "]" : "document";
    const api::JsonItems& items = scan.items[i];
    if (!items.found) {
      KD_TRY(decodeJsonDocument(text.substr(doc.begin, doc.end - doc.begin), where, out));
      continue;
    }
    // The document without its items: "{"kind":"List","items":[]}".
    std::string rest(text.substr(doc.begin, items.array.begin + 1 - doc.begin));
    rest.append(text.substr(items.array.end - 1, doc.end - (items.array.end - 1)));
    KD_TRY(decodeJsonDocument(rest, where, out, text, &items));
  }
  return Status::ok();
}

}  // namespace

namespace {

template <typename T>
const T* objectAs(const api::Object& o) {
  return std::get_if<T>(&o);
}
template <typename T>
const T* objectAs(const SharedObject& o) {
  const auto* p = std::get_if<std::shared_ptr<const T>>(&o);
  return p ? p->get() : nullptr;
}

template <typename Objects>
void notePodsOnUnknownNodesIn(const Objects& objects, LoadReport& report) {
  std::unordered_set<std::string> nodeNames;
  for (const auto& o : objects)
    if (auto* n = objectAs<api::Node>(o)) nodeNames.insert(n->name);
  std::size_t orphans = 0;
  for (const auto& o : objects) {
    const auto* p = objectAs<api::Pod>(o);
    if (p && !p->nodeName.empty() && !nodeNames.count(p->nodeName.str())) {
      ++orphans;
      if (report.warnings.size() < 20)
        report.warnings.push_back("pod " + p->key() + " is bound to node " + p->nodeName.str() +
                                  ", which is not in the snapshot: no strategy considers it");
    }
  }
  if (orphans > 20)
    report.warnings.push_back(std::to_string(orphans - 20) + " more pods are bound to nodes missing from the snapshot");
  if (orphans) report.skipped["Pod on an unknown node"] = orphans;
}

Result<LoadReport> loadText(std::string_view text, const char* readableEnd, std::function<void(const char*)> release,
                            const std::string& sourceName, Store& store, usage::SourceReadings* metrics) {
  Decoded out;
  out.store = &store;
  out.metrics = metrics;
  out.readableEnd = readableEnd;
  out.release = std::move(release);
  out.report.bytes = text.size();
  // PowerShell's `kubectl get ... > FILE` writes UTF-16 with a byte order mark: read as UTF-8 (a
  // copy of half the size; the original goes when this returns).
  if (std::optional<std::string> utf8 = api::fromUtf16(text); utf8 && !utf8->empty()) {
    auto r = loadText(*utf8, utf8->data() + utf8->size(), nullptr, sourceName, store, metrics);
    if (r.isOk()) {
      r->bytes = text.size();
      r->warnings.push_back("the file is UTF-16 text; read as the same text in UTF-8 would be");
    }
    return r;
  }
  auto checked = api::checkTextEncoding(text, kSnapshotText);
  if (!checked.isOk()) return Status::error(sourceName + ": " + checked.error());
  text = *checked;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return Status::error(sourceName + ": the file is empty");
  if (Status st = decodeText(text, out); !st.isOk()) return st.prefix(sourceName);

  notePodsOnUnknownNodesIn(out.objects, out.report);

  for (auto& o : out.objects) std::visit([&](auto& p) { store.upsert(std::move(p)); }, o);
  if (metrics) metrics->pods.finish();
  return std::move(out.report);
}

}  // namespace

void notePodsOnUnknownNodes(const std::vector<api::Object>& objects, LoadReport& report) {
  notePodsOnUnknownNodesIn(objects, report);
}

Result<LoadReport> loadSnapshot(std::string_view text, const std::string& sourceName, Store& store,
                                usage::SourceReadings* metrics) {
  return loadText(text, text.data() + text.size(), nullptr, sourceName, store, metrics);
}

Result<LoadReport> loadSnapshotFile(const std::string& path, Store& store, std::size_t maxBytes,
                                    usage::SourceReadings* metrics) {
  auto input = InputBuffer::readFile(path, maxBytes);
  if (!input.isOk()) return input.status();
  const std::string_view text = input->text();
  return loadText(
      text, text.data() + input->capacity(), [&](const char* end) { input->releaseBefore(end); }, path, store, metrics);
}

}  // namespace kdesched::cluster
