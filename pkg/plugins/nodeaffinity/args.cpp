#include "pkg/plugins/nodeaffinity/args.h"

namespace kdesched::plugins::nodeaffinity {

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<std::vector<std::string>> types;
  KD_TRY(r.readStringList("nodeAffinityType", types));
  KD_TRY(readPodListFilter(r, a.filter));
  // Unknown keys first: a misspelt nodeAffinityType would otherwise read as a missing one.
  KD_TRY(r.finish());
  if (!types || types->empty()) return r.error("nodeAffinityType", "nodeAffinityType needs to be set");
  for (std::size_t i = 0; i < types->size(); ++i) {
    const auto& t = (*types)[i];
    if (t != kRequired && t != kPreferred)
      return r.error("nodeAffinityType[" + std::to_string(i) + "]",
                     "must be " + std::string(kRequired) + " or " + kPreferred + ", got \"" + t + "\"");
  }
  a.nodeAffinityType = std::move(*types);
  return a;
}

}  // namespace kdesched::plugins::nodeaffinity
