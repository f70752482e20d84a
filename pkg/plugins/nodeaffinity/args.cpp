#include "pkg/plugins/nodeaffinity/args.h"

namespace kdesched::plugins::nodeaffinity {

Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<std::vector<std::string>> types;
  KD_TRY(r.readStringList("nodeAffinityType", types));
  KD_TRY(readPodListFilter(r, a.filter));
  // Unknown keys first: a misspelt nodeAffinityType would otherwise read as a missing one.
  KD_TRY(r.finish());
  if (!types || types->empty()) return r.error("nodeAffinityType", "nodeAffinityType needs to be set");
  // Upstream validates only that the list is non-empty; each cycle it logs an unknown value and
  // skips it. Skipping it once, at load, evicts the same pods.
  const std::vector<std::string> known = {kRequired, kPreferred};
  for (std::size_t i = 0; i < types->size(); ++i) {
    const std::string& t = (*types)[i];
    if (t == kRequired || t == kPreferred) {
      a.nodeAffinityType.push_back(t);
      continue;
    }
    std::string line = r.pathOf("nodeAffinityType[" + std::to_string(i) + "]") + ": unknown value \"" + t +
                       "\", skipped (upstream logs \"Invalid nodeAffinityType\" each cycle and skips it too)";
    if (std::string close = policy::closestMatch(t, known); !close.empty()) line += "; did you mean \"" + close + "\"?";
    warnings.push_back(std::move(line));
  }
  if (a.nodeAffinityType.empty()) {
    warnings.push_back(r.pathOf("nodeAffinityType") + ": no known value (" + kRequired + " or " + kPreferred +
                       "), so " + kName + " evicts nothing here, as upstream");
  }
  return a;
}

}  // namespace kdesched::plugins::nodeaffinity
