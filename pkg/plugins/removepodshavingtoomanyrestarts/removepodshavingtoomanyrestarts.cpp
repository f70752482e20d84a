#include "pkg/plugins/removepodshavingtoomanyrestarts/removepodshavingtoomanyrestarts.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::removepodshavingtoomanyrestarts {
namespace {

bool counts(const api::ContainerStatus& cs, bool includingInit) {
  return cs.kind == api::ContainerKind::Regular || (includingInit && cs.kind == api::ContainerKind::Init);
}

bool listed(const std::vector<api::Symbol>& states, std::string_view s) {
  return std::any_of(states.begin(), states.end(), [&](const api::Symbol& x) { return x.view() == s; });
}

}  // namespace

// Summed in 64 bits: upstream's int32 sum can wrap for absurd counts and hide a crash-looping pod.
std::int64_t RemovePodsHavingTooManyRestarts::restarts(const api::Pod& pod) const {
  std::int64_t n = 0;
  for (const auto& cs : pod.status().containers) {
    if (counts(cs, args_.includingInitContainers)) n += cs.restartCount;
  }
  return n;
}

std::string_view RemovePodsHavingTooManyRestarts::matchingState(const api::Pod& pod) const {
  if (listed(args_.states, api::toString(pod.phase))) return api::toString(pod.phase);
  for (const auto& cs : pod.status().containers) {
    if (counts(cs, args_.includingInitContainers) && !cs.waitingReason.empty() &&
        listed(args_.states, cs.waitingReason.view()))
      return cs.waitingReason.view();
  }
  return "";
}

std::string RemovePodsHavingTooManyRestarts::notInStates(const api::Pod& pod) const {
  std::string states;
  for (const api::Symbol& st : args_.states) states += (states.empty() ? "" : ",") + st.str();
  return "phase " + std::string(api::toString(pod.phase)) + " and no container waiting reason is in states [" + states +
         "]";
}

Status RemovePodsHavingTooManyRestarts::deschedule(framework::Handle& h) {
  for (const api::Node* node : h.nodes()) {
    std::vector<std::pair<std::int64_t, const api::Pod*>> candidates;
    for (const api::Pod* pod : h.podsOnNode(*node, framework::PodPhases::All)) {
      if (h.isEvicted(*pod) || !h.inScope(*pod) || !args_.filter.admits(h, *pod)) continue;
      const std::int64_t n = restarts(*pod);
      if (n < args_.podRestartThreshold) {
        if (h.explaining(*pod))
          h.passOver(*pod, "under threshold: containers restarted " + std::to_string(n) + " times" +
                               (args_.includingInitContainers ? " (init containers included)" : "") +
                               ", podRestartThreshold is " + std::to_string(args_.podRestartThreshold));
        continue;
      }
      if (!args_.states.empty() && matchingState(*pod).empty()) {
        if (h.explaining(*pod))
          h.passOver(*pod, "not a candidate: " + std::to_string(n) + " restarts, but " + notInStates(*pod));
        continue;
      }
      if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
      candidates.emplace_back(n, pod);
    }
    // Most restarts first, as upstream sorts; ties keep the listing order (upstream's sort is
    // unstable, so any tie order matches it).
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [n, pod] : candidates) {
      std::string reason = "containers restarted " + std::to_string(n) + " times";
      if (args_.includingInitContainers) reason += " (init containers included)";
      reason += ", podRestartThreshold is " + std::to_string(args_.podRestartThreshold);
      if (!args_.states.empty()) reason += ", pod is in state " + std::string(matchingState(*pod));
      framework::EvictResult res = h.evict(*pod, reason);
      if (res.refusal == framework::Refusal::NodeLimit) break;
      if (res.stopsPlugin()) return Status::ok();
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<RemovePodsHavingTooManyRestarts>(kName, decodeArgs);
}

}  // namespace kdesched::plugins::removepodshavingtoomanyrestarts
