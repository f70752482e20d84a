#include "test/fuzz/entry_points.h"

#include <stdlib.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "pkg/api/decode.h"
#include "pkg/api/labels.h"
#include "pkg/api/quantity.h"
#include "pkg/api/yaml_json.h"
#include "pkg/cluster/loader.h"
#include "pkg/cluster/store.h"
#include "pkg/kube/config.h"
#include "pkg/kube/wire.h"
#include "pkg/kube/wire_proto.h"
#include "pkg/policy/policy.h"

namespace kdesched::fuzz {
namespace {

// A broken invariant is a finding like a crash: abort so libFuzzer saves the input.
void invariant(bool holds, const std::string& what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

bool startsLikeJson(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

std::string keyOf(const api::Object& object) {
  return std::visit([](const auto& o) { return cluster::objectKey(o); }, object);
}

// What a cycle does with a loaded store: take a snapshot and read it through its indexes. The
// snapshot must hold exactly what the store holds.
void useStore(const cluster::Store& store) {
  const auto snap = store.snapshot();
  invariant(snap->pods().size() == store.count(api::Kind::Pod), "snapshot and store disagree on the pod count");
  invariant(snap->nodes().size() == store.count(api::Kind::Node), "snapshot and store disagree on the node count");
  for (const api::Pod* pod : snap->pods()) {
    (void)snap->podsOnNode(pod->nodeName);
    (void)snap->podsInNamespace(pod->ns);
    (void)snap->pdbsInNamespace(pod->ns);
    (void)snap->namespaceByName(pod->ns.str());
  }
  for (const api::Node* node : snap->nodes()) (void)snap->node(node->name);
}

void snapshotJson(std::string_view input) {
  // Inputs that do not start like JSON take the YAML path, which snapshot_yaml covers.
  if (!startsLikeJson(input)) return;
  cluster::Store store;
  if (cluster::loadSnapshot(input, "fuzz.json", store).isOk()) useStore(store);
}

void snapshotYaml(std::string_view input) {
  // The document marker keeps the loader on its YAML path whatever the input starts with.
  const std::string text = "---\n" + std::string(input);
  cluster::Store store;
  if (cluster::loadSnapshot(text, "fuzz.yaml", store).isOk()) useStore(store);
}

void yamlJson(std::string_view input) {
  auto docs = api::yamlStreamToJson(input);
  if (!docs.isOk()) return;
  for (const auto& doc : *docs) invariant(nlohmann::json::accept(doc), "yamlStreamToJson wrote invalid JSON: " + doc);
}

void policy(std::string_view input) { (void)policy::parsePolicy(std::string(input), "fuzz-policy.yaml"); }

void quantity(std::string_view input) {
  auto milli = api::parseQuantityMilli(input);
  if (!milli.isOk()) return;
  for (const bool binary : {false, true}) {
    const std::string text = api::formatMilli(*milli, binary);
    auto back = api::parseQuantityMilli(text);
    invariant(back.isOk() && *back == *milli,
              "formatMilli(" + std::to_string(*milli) + ") = \"" + text + "\" does not parse back to the same amount");
  }
}

void labelSelector(std::string_view input) {
  auto selector = api::parseLabelSelector(input);
  if (!selector.isOk()) return;
  (void)api::validateLabelSelector(*selector);
  const std::string text = selector->toString();
  auto again = api::parseLabelSelector(text);
  invariant(again.isOk(), "toString() of a parsed selector does not parse: \"" + text + "\"");
  invariant(again->toString() == text,
            "selector string is not stable: \"" + text + "\" → \"" + again->toString() + "\"");
  const api::Labels labels{{"app", "web"}, {"tier", "1"}, {"zone", "a"}};
  invariant(selector->matches(labels) == again->matches(labels), "re-parsed selector matches differently: " + text);
}

// kubeconfigs are read from files, and relative paths inside resolve against the file's
// directory: a private directory keeps what the fuzzer can name there to the kubeconfig itself.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kdesched-fuzz-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void kubeconfig(std::string_view input) {
  static const ScratchDir dir;
  const std::string path = (dir.path() / "config").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(input.data(), static_cast<std::streamsize>(input.size()));
    invariant(out.good(), "cannot write " + path);
  }
  (void)kube::loadKubeconfig(path);
}

// LIST and WATCH inputs name the resource on their first line ("Pod\n{...}"), as the reflector
// knows which resource it lists: the kind selects the decoder.
bool splitKind(std::string_view input, api::Kind& kind, std::string_view& rest) {
  const auto eol = input.find('\n');
  if (eol == std::string_view::npos) return false;
  kind = api::kindFromString(input.substr(0, eol));
  rest = input.substr(eol + 1);
  return kind != api::Kind::Unknown;
}

// A decoded page replaces what the store held of its kind, as a relist does.
void listPage(std::string_view input) {
  api::Kind kind;
  std::string_view rest;
  if (!splitKind(input, kind, rest)) return;
  std::string body(rest);
  kube::ListPage page;
  if (!kube::decodeListPage(kind, body, page).isOk()) return;
  std::set<std::string> keys;
  for (const auto& o : page.objects) keys.insert(keyOf(o));
  cluster::Store store;
  store.replace(kind, std::move(page.objects));
  invariant(store.count(kind) == keys.size(), "the store after a relist does not hold one object per key");
  useStore(store);
}

// Each line is one event of a stream, applied to a store as the reflector applies it; a set of keys
// tracks what the store must hold.
void watchEvent(std::string_view input) {
  api::Kind kind;
  std::string_view rest;
  if (!splitKind(input, kind, rest)) return;
  api::JsonParser parser;  // one for the whole stream, as the reflector keeps one per watch
  cluster::Store store;
  std::set<std::string> keys;
  while (!rest.empty()) {
    const auto eol = rest.find('\n');
    std::string line(rest.substr(0, eol));
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    kube::WatchEvent event;
    if (!kube::decodeWatchEvent(kind, line, parser, event).isOk()) continue;
    if (event.undecodable) {
      // As the reflector does: the object's last readable state leaves the store.
      keys.erase(event.undecodable->key);
      store.remove(kind, event.undecodable->key);
      continue;
    }
    if (event.type == kube::WatchEventType::Added || event.type == kube::WatchEventType::Modified) {
      // api::Kind lists the kinds in the order of api::Object's alternatives.
      invariant(event.object.index() == static_cast<std::size_t>(kind), "a watch event decoded into another kind");
      keys.insert(keyOf(event.object));
      store.upsert(std::move(event.object));
    } else if (event.type == kube::WatchEventType::Deleted) {
      keys.erase(keyOf(event.object));
      store.remove(kind, keyOf(event.object));
    }
  }
  invariant(store.count(kind) == keys.size(), "the store after a watch stream does not hold one object per key");
  useStore(store);
}

// A protobuf LIST body of pods (magic, Unknown, PodList): every item decodes whole or is named
// undecodable; none is half-used.
void protobufList(std::string_view input) {
  kube::ListPage page;
  if (!kube::decodeListPageProto(api::Kind::Pod, input, page).isOk()) return;
  for (const auto& o : page.objects) {
    invariant(std::holds_alternative<api::Pod>(o), "a protobuf pod list decoded into another kind");
    invariant(!std::get<api::Pod>(o).name.empty(), "a decoded pod without a name");
  }
}

// A protobuf watch stream: frames of a 4-byte big-endian length and a WatchEvent, read as
// WatchStream reads them, up to the first frame that is cut or does not decode.
void protobufWatch(std::string_view input) {
  while (input.size() >= 4) {
    const auto* b = reinterpret_cast<const unsigned char*>(input.data());
    const std::size_t n = (std::size_t{b[0]} << 24) | (std::size_t{b[1]} << 16) | (std::size_t{b[2]} << 8) | b[3];
    if (n > input.size() - 4) return;
    kube::WatchEvent event;
    if (!kube::decodeWatchEventProto(api::Kind::Pod, input.substr(4, n), event).isOk()) return;
    const bool change = event.type == kube::WatchEventType::Added || event.type == kube::WatchEventType::Modified ||
                        event.type == kube::WatchEventType::Deleted;
    if (change && !event.undecodable) {
      invariant(!std::get<api::Pod>(event.object).name.empty(), "a decoded pod without a name");
    }
    input.remove_prefix(4 + n);
  }
}

constexpr std::array kTargets{
    Target{"snapshot_json", snapshotJson},
    Target{"snapshot_yaml", snapshotYaml},
    Target{"yaml_json", yamlJson},
    Target{"policy", policy},
    Target{"quantity", quantity},
    Target{"label_selector", labelSelector},
    Target{"kubeconfig", kubeconfig},
    Target{"list_page", listPage},
    Target{"watch_event", watchEvent},
    Target{"protobuf_list", protobufList},
    Target{"protobuf_watch", protobufWatch},
};

}  // namespace

std::span<const Target> targets() { return kTargets; }

const Target* findTarget(std::string_view name) {
  for (const auto& t : kTargets)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace kdesched::fuzz
