// kdesched-wire-compare: the proof that the protobuf and the JSON decoders read a real API server's
// pods the same. Given the answers one API server gave to the same request in both content types
// (saved by curl in test/e2e/wire.sh), it decodes each the way the reflector does and compares every
// pod field by field (test/unit/testing/pod_dump.h).
//
//   kdesched-wire-compare list JSON_BODY PROTOBUF_BODY [KIND]     a LIST (one page each)
//   kdesched-wire-compare watch JSON_STREAM PROTOBUF_STREAM [KIND] a watch (-list) stream, ended
// KIND: Pod (the default) or Node.
//
// Prints the number of pods, the bytes of each answer and, for each difference, the pod and the
// lines that differ. Exit status: 0 identical, 1 a difference or a decoding error, 2 usage.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "pkg/api/decode.h"
#include "pkg/api/decode_proto.h"
#include "pkg/kube/wire.h"
#include "pkg/kube/wire_proto.h"
#include "test/unit/testing/pod_dump.h"

namespace {

using namespace kdesched;  // NOLINT(google-build-using-namespace)

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Pods by key, each as its dump; plus what else the answer said (events, bookmarks, errors).
struct Decoded {
  std::map<std::string, std::string> pods;
  std::vector<std::string> notes;  // undecodable objects, bookmarks, the list's resourceVersion
};

void addPod(Decoded& out, const api::Object& obj, const std::string& prefix = "") {
  if (const auto* node = std::get_if<api::Node>(&obj)) {
    out.pods[node->name] = prefix + testing::dumpNode(*node);
    return;
  }
  const auto& pod = std::get<api::Pod>(obj);
  out.pods[pod.key()] = prefix + testing::dumpPod(pod);
}

void addPage(Decoded& out, const kube::ListPage& page) {
  for (const auto& o : page.objects) addPod(out, o);
  for (const auto& u : page.undecodable) out.notes.push_back("undecodable " + u.key + ": " + u.error);
  out.notes.push_back("continue=" + page.continueToken);
}

void addEvent(Decoded& out, const kube::WatchEvent& ev) {
  const std::string type(kube::toString(ev.type));
  if (ev.type == kube::WatchEventType::Bookmark) {
    // The periodic ones come when they come; the one that ends the initial events is the stream's.
    if (ev.initialEventsEnd) out.notes.push_back("BOOKMARK initialEventsEnd=1");
  } else if (ev.type == kube::WatchEventType::Error) {
    out.notes.push_back("ERROR " + ev.error.describe());
  } else if (ev.undecodable) {
    out.notes.push_back(type + " undecodable " + ev.undecodable->key + ": " + ev.undecodable->error);
  } else {
    addPod(out, ev.object, type + " rv=" + ev.resourceVersion + "\n");
  }
}

Decoded decodeJsonStream(api::Kind kind, const std::string& body) {
  Decoded out;
  api::JsonParser parser;
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    kube::WatchEvent ev;
    if (Status s = kube::decodeWatchEvent(kind, line, parser, ev); !s.isOk())
      throw std::runtime_error("JSON watch line: " + s.message());
    addEvent(out, ev);
  }
  return out;
}

Decoded decodeProtobufStream(api::Kind kind, const std::string& body) {
  Decoded out;
  std::size_t at = 0;
  while (at < body.size()) {
    if (body.size() - at < 4) throw std::runtime_error("protobuf watch: a cut frame length");
    const auto* b = reinterpret_cast<const unsigned char*>(body.data() + at);
    const std::size_t n = (std::size_t{b[0]} << 24) | (std::size_t{b[1]} << 16) | (std::size_t{b[2]} << 8) | b[3];
    if (body.size() - at - 4 < n) throw std::runtime_error("protobuf watch: a cut frame");
    kube::WatchEvent ev;
    if (Status s = kube::decodeWatchEventProto(kind, std::string_view(body).substr(at + 4, n), ev); !s.isOk())
      throw std::runtime_error("protobuf watch frame: " + s.message());
    addEvent(out, ev);
    at += 4 + n;
  }
  return out;
}

// The lines of `a` not in `b` and the other way round, for one pod.
void showDiff(const std::string& a, const std::string& b) {
  auto lines = [](const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  const auto la = lines(a), lb = lines(b);
  for (const auto& l : la)
    if (std::find(lb.begin(), lb.end(), l) == lb.end()) std::cout << "  json:     " << l << "\n";
  for (const auto& l : lb)
    if (std::find(la.begin(), la.end(), l) == la.end()) std::cout << "  protobuf: " << l << "\n";
}

int compare(const Decoded& json, const Decoded& proto, std::size_t jsonBytes, std::size_t protoBytes) {
  int differences = 0;
  for (const auto& [key, dump] : json.pods) {
    auto it = proto.pods.find(key);
    if (it == proto.pods.end()) {
      std::cout << "only in JSON: " << key << "\n";
      ++differences;
    } else if (it->second != dump) {
      std::cout << "differs: " << key << "\n";
      showDiff(dump, it->second);
      ++differences;
    }
  }
  for (const auto& [key, dump] : proto.pods) {
    if (!json.pods.count(key)) {
      std::cout << "only in protobuf: " << key << "\n";
      ++differences;
    }
  }
  if (json.notes != proto.notes) {
    std::cout << "the rest differs:\n";
    for (const auto& n : json.notes) std::cout << "  json:     " << n << "\n";
    for (const auto& n : proto.notes) std::cout << "  protobuf: " << n << "\n";
    ++differences;
  }
  std::cout << "pods=" << json.pods.size() << " json_bytes=" << jsonBytes << " protobuf_bytes=" << protoBytes
            << " ratio=" << (jsonBytes ? double(protoBytes) / double(jsonBytes) : 0.0) << " initial_events_end="
            << std::count(json.notes.begin(), json.notes.end(), std::string("BOOKMARK initialEventsEnd=1"))
            << " differences=" << differences << "\n";
  return differences == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const api::Kind kind = argc == 5 ? api::kindFromString(argv[4]) : api::Kind::Pod;
  if ((argc != 4 && argc != 5) || (std::string(argv[1]) != "list" && std::string(argv[1]) != "watch") ||
      !api::decodesProto(kind)) {
    std::cerr << "usage: kdesched-wire-compare list|watch JSON_FILE PROTOBUF_FILE [Pod|Node]\n";
    return 2;
  }
  try {
    std::string jsonBody = readFile(argv[2]);
    const std::string protoBody = readFile(argv[3]);
    const std::size_t jsonBytes = jsonBody.size();
    Decoded json, proto;
    if (std::string(argv[1]) == "list") {
      kube::ListPage jp, pp;
      if (Status s = kube::decodeListPage(kind, jsonBody, jp); !s.isOk())
        throw std::runtime_error("JSON list: " + s.message());
      if (Status s = kube::decodeListPageProto(kind, protoBody, pp); !s.isOk())
        throw std::runtime_error("protobuf list: " + s.message());
      addPage(json, jp);
      addPage(proto, pp);
      // The two requests were made one after the other: their resourceVersions may differ.
    } else {
      json = decodeJsonStream(kind, jsonBody);
      proto = decodeProtobufStream(kind, protoBody);
    }
    return compare(json, proto, jsonBytes, protoBody.size());
  } catch (const std::exception& e) {
    std::cerr << "kdesched-wire-compare: " << e.what() << "\n";
    return 1;
  }
}
