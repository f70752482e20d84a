#include "pkg/plugins/removefailedpods/removefailedpods.h"

#include <algorithm>

#include "pkg/plugins/common/age.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::removefailedpods {
namespace {

bool counts(const api::ContainerStatus& cs, bool includingInit) {
  return cs.kind == api::ContainerKind::Regular || (includingInit && cs.kind == api::ContainerKind::Init);
}

// The first of the pod's reasons that is in `wanted` (any, when `wanted` is empty): status.reason,
// then the containers' waiting and terminated reasons. Empty reasons never count.
api::Symbol matchingReason(const api::PodStatusDetail& st, const std::vector<api::Symbol>& wanted, bool includingInit) {
  auto ok = [&](const api::Symbol& r) {
    return !r.empty() && (wanted.empty() || std::find(wanted.begin(), wanted.end(), r) != wanted.end());
  };
  if (ok(st.reason)) return st.reason;
  for (const auto& cs : st.containers) {
    if (!counts(cs, includingInit)) continue;
    if (ok(cs.waitingReason)) return cs.waitingReason;
    if (ok(cs.terminatedReason)) return cs.terminatedReason;
  }
  return {};
}

// The first terminated container's exit code that is in `wanted` (any, when `wanted` is empty).
std::optional<std::int32_t> matchingExitCode(const api::PodStatusDetail& st, const std::vector<std::int32_t>& wanted,
                                             bool includingInit) {
  for (const auto& cs : st.containers) {
    if (!counts(cs, includingInit) || !cs.exitCode) continue;
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), *cs.exitCode) != wanted.end()) return cs.exitCode;
  }
  return std::nullopt;
}

}  // namespace

namespace {

struct NotFailed {  // skip
  api::PodPhase phase;
  std::string text() const { return "not a candidate: phase is " + std::string(api::toString(phase)) + ", not Failed"; }
};

struct TooYoung {  // skip
  std::int64_t age;
  std::uint64_t minPodLifetimeSeconds;
  std::string text() const {
    return "too young: failed pod created " + describeAge(std::max<std::int64_t>(age, 0)) +
           " ago, minPodLifetimeSeconds is " + std::to_string(minPodLifetimeSeconds);
  }
};

struct ExcludedOwnerKind {  // skip
  std::string_view kind;
  std::string text() const { return "excluded: owner kind " + std::string(kind) + " is in excludeOwnerKinds"; }
};

}  // namespace

framework::Verdict RemoveFailedPods::judge(const api::Pod& pod, api::Timestamp now) const {
  using framework::Verdict;
  if (pod.phase != api::PodPhase::Failed) return Verdict::skip(NotFailed{pod.phase});
  // Upstream converts a negative age to a huge unsigned one, so a pod created "in the future"
  // (clock skew, a hand-made snapshot) counts as old. Here it is as young as it gets. A pod
  // without a creationTimestamp is old, as upstream's zero time makes it.
  std::optional<std::int64_t> age;
  if (pod.creationTimestamp) age = now - *pod.creationTimestamp;
  if (args_.minPodLifetimeSeconds > 0 && age && *age < static_cast<std::int64_t>(args_.minPodLifetimeSeconds))
    return Verdict::skip(TooYoung{*age, args_.minPodLifetimeSeconds});
  for (const auto& o : pod.owners) {
    const auto& kinds = args_.excludeOwnerKinds;
    if (std::find(kinds.begin(), kinds.end(), o.kind.view()) != kinds.end())
      return Verdict::skip(ExcludedOwnerKind{o.kind.view()});
  }
  const api::PodStatusDetail& st = pod.status();
  const api::Symbol reason = matchingReason(st, args_.reasons, args_.includingInitContainers);
  if (!args_.reasons.empty() && reason.empty())
    return Verdict::skip("not a candidate: no status or container reason is listed in reasons");
  const std::optional<std::int32_t> exitCode = matchingExitCode(st, args_.exitCodes, args_.includingInitContainers);
  if (!args_.exitCodes.empty() && !exitCode)
    return Verdict::skip("not a candidate: no container exit code is listed in exitCodes");

  std::string why = "pod failed";
  if (!reason.empty()) why += " with reason " + reason.str();
  if (exitCode) why += std::string(reason.empty() ? " with" : " and") + " exit code " + std::to_string(*exitCode);
  if (age) why += ", created " + describeAge(std::max<std::int64_t>(*age, 0)) + " ago";
  why += " (RemoveFailedPods: minPodLifetimeSeconds " + std::to_string(args_.minPodLifetimeSeconds);
  if (!args_.reasons.empty()) why += ", reason listed in reasons";
  if (!args_.exitCodes.empty()) why += ", exit code listed in exitCodes";
  return Verdict::candidate(why + ")");
}

std::optional<api::Timestamp> RemoveFailedPods::eligibleAt(const api::Pod& pod, api::Timestamp now) const {
  if (pod.phase != api::PodPhase::Failed || !pod.creationTimestamp || !args_.filter.allows(pod)) return std::nullopt;
  const api::Timestamp at = *pod.creationTimestamp + static_cast<api::Timestamp>(args_.minPodLifetimeSeconds);
  if (at <= now || !judge(pod, at).isCandidate()) return std::nullopt;
  return at;
}

Status RemoveFailedPods::deschedule(framework::Handle& h) {
  const api::Timestamp now = now_();
  for (const api::Node* node : h.nodes()) {
    for (const api::Pod* pod : h.candidatesOnNode(*node, framework::PodPhases::All)) {
      if (h.isEvicted(*pod) || !args_.filter.admits(h, *pod)) continue;
      const framework::Verdict verdict = judge(*pod, now);
      if (!h.admit(*pod, verdict)) continue;
      framework::EvictResult res = h.evict(*pod, verdict.reason);
      if (res.refusal == framework::Refusal::NodeLimit) break;
      if (res.stopsPlugin()) return Status::ok();
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() { return common::registrationOf<RemoveFailedPods>(kName, decodeArgs); }

}  // namespace kdesched::plugins::removefailedpods
