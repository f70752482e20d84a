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

namespace {

// "containers restarted 7 times (init containers included), podRestartThreshold is 5"
std::string restartsAgainstThreshold(std::int64_t n, const Args& a) {
  return "containers restarted " + std::to_string(n) + " times" +
         (a.includingInitContainers ? " (init containers included)" : "") + ", podRestartThreshold is " +
         std::to_string(a.podRestartThreshold);
}

struct UnderThreshold {  // skip
  std::int64_t restarts;
  const Args* args;
  std::string text() const { return "under threshold: " + restartsAgainstThreshold(restarts, *args); }
};

struct NotInStates {  // skip: enough restarts, but in none of the states
  std::int64_t restarts;
  const RemovePodsHavingTooManyRestarts* plugin;
  const api::Pod* pod;
  std::string text() const {
    return "not a candidate: " + std::to_string(restarts) + " restarts, but " + plugin->notInStates(*pod);
  }
};

struct TooManyRestarts {  // candidate
  std::int64_t restarts;
  const Args* args;
  std::string_view state;  // the one of `states` the pod is in; empty without states
  std::string text() const {
    std::string out = restartsAgainstThreshold(restarts, *args);
    if (!args->states.empty()) out += ", pod is in state " + std::string(state);
    return out;
  }
};

}  // namespace

framework::Verdict RemovePodsHavingTooManyRestarts::judge(const api::Pod& pod, std::int64_t n) const {
  if (n < args_.podRestartThreshold) return framework::Verdict::skip(UnderThreshold{n, &args_});
  const std::string_view state = args_.states.empty() ? std::string_view() : matchingState(pod);
  if (!args_.states.empty() && state.empty()) return framework::Verdict::skip(NotInStates{n, this, &pod});
  return framework::Verdict::candidate(TooManyRestarts{n, &args_, state});
}

Status RemovePodsHavingTooManyRestarts::deschedule(framework::Handle& h) {
  struct Candidate {
    std::int64_t restarts;
    const api::Pod* pod;
    framework::Verdict verdict;
  };
  std::vector<Candidate> candidates;
  for (const api::Node* node : h.nodes()) {
    candidates.clear();
    for (const api::Pod* pod : h.candidatesOnNode(*node, framework::PodPhases::All)) {
      if (h.isEvicted(*pod) || !args_.filter.admits(h, *pod)) continue;
      const std::int64_t n = restarts(*pod);
      framework::Verdict verdict = judge(*pod, n);
      if (h.admit(*pod, verdict)) candidates.push_back({n, pod, std::move(verdict)});
    }
    // Most restarts first, as upstream sorts; ties keep the listing order (upstream's sort is
    // unstable, so any tie order matches it).
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.restarts > b.restarts; });
    for (const Candidate& c : candidates) {
      framework::EvictResult res = h.evict(*c.pod, c.verdict.reason);
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
