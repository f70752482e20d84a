#include "pkg/api/yaml_scan.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

namespace kdesched::api {
namespace {

class Scanner : public YAML::EventHandler {
 public:
  explicit Scanner(YamlScan& out) : out_(out) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    out_.stuck = out_.documents > 0 && mark.pos == lastStart_.pos;
    if (out_.stuck) out_.stuckAt = mark;
    lastStart_ = mark;
    ++out_.documents;
    rootSeen_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { root(false, {}); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { root(true, mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    root(true, mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    root(true, mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    root(true, mark);
  }
  void OnMapEnd() override {}

 private:
  void root(bool hasContent, const YAML::Mark& mark) {
    if (rootSeen_) return;
    rootSeen_ = true;
    if (!hasContent) return;
    if (++out_.nonEmpty == 2) out_.secondDocument = mark;
  }
  YamlScan& out_;
  bool rootSeen_ = false;
  YAML::Mark lastStart_ = YAML::Mark::null_mark();
};

}  // namespace

YamlScan scanYaml(const std::string& text) {
  YamlScan out;
  Scanner scanner(out);
  std::istringstream in(text);
  YAML::Parser parser(in);
  while (parser.HandleNextDocument(scanner)) {
    if (out.stuck) break;
  }
  return out;
}

}  // namespace kdesched::api
