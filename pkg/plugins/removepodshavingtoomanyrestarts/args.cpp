#include "pkg/plugins/removepodshavingtoomanyrestarts/args.h"

namespace kdesched::plugins::removepodshavingtoomanyrestarts {

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<std::int32_t> threshold;
  std::optional<bool> init;
  std::optional<std::vector<std::string>> states;
  KD_TRY(readPodListFilter(r, a.filter));
  KD_TRY(r.readInt32("podRestartThreshold", threshold));
  KD_TRY(r.readBool("includingInitContainers", init));
  KD_TRY(r.readStringList("states", states));
  KD_TRY(r.finish());
  // Upstream's messages and order: the threshold, then the states.
  a.podRestartThreshold = threshold.value_or(0);
  if (a.podRestartThreshold < 1) {
    return r.error("podRestartThreshold", "invalid PodsHavingTooManyRestarts threshold (must be at least 1, got " +
                                              std::to_string(a.podRestartThreshold) + ")");
  }
  const auto& list = states.value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] != "Running" && list[i] != "CrashLoopBackOff") {
      return r.error("states[" + std::to_string(i) + "]",
                     "states must be one of [CrashLoopBackOff Running], got \"" + list[i] + "\"");
    }
    a.states.emplace_back(list[i]);
  }
  a.includingInitContainers = init.value_or(false);
  return a;
}

}  // namespace kdesched::plugins::removepodshavingtoomanyrestarts
