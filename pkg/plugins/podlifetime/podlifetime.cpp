#include "pkg/plugins/podlifetime/podlifetime.h"

#include <algorithm>
#include <ctime>
#include <limits>
#include <vector>

#include "pkg/base/duration_text.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::podlifetime {
namespace {

bool contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string_view kindName(api::ContainerKind k) {
  switch (k) {
    case api::ContainerKind::Regular: return "container";
    case api::ContainerKind::Init: return "init container";
    case api::ContainerKind::Ephemeral: return "ephemeral container";
  }
  return "container";
}

bool ownerKindsAllow(const Args& a, const api::Pod& pod) {
  if (!a.ownerKindsInclude.empty()) {
    return std::any_of(pod.owners.begin(), pod.owners.end(),
                       [&](const api::OwnerReference& o) { return contains(a.ownerKindsInclude, o.kind.view()); });
  }
  return std::none_of(pod.owners.begin(), pod.owners.end(),
                      [&](const api::OwnerReference& o) { return contains(a.ownerKindsExclude, o.kind.view()); });
}

std::string utcText(api::Timestamp t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "maxPodLifeTimeSeconds is 7200", and with a jitter the pod's own share and deadline:
// "maxPodLifeTimeSeconds is 7200 plus jitter 4m12s: lifetime ends 2026-01-02T05:04:12Z".
std::string lifetimeText(std::uint64_t max, std::uint64_t extra, const api::Pod& pod, bool longForm) {
  std::string out = "maxPodLifeTimeSeconds is " + std::to_string(max);
  if (longForm) out += " (" + formatAge(max) + ")";
  if (extra == 0) return out;
  out += " plus jitter " + formatAge(extra);
  if (pod.creationTimestamp)
    out += ": lifetime ends " + utcText(*pod.creationTimestamp + static_cast<api::Timestamp>(max + extra));
  return out;
}

// Upstream compares the truncated whole seconds of the age, strictly. A pod created in the future
// (clock skew) is not old; nor, unlike upstream (which reads the zero time as ancient), one without
// a creationTimestamp, which only a hand-written snapshot can have. `extra` is the pod's jitter.
std::optional<std::string> matchAge(std::uint64_t max, std::uint64_t extra, const api::Pod& pod, api::Timestamp now) {
  if (!pod.creationTimestamp || *pod.creationTimestamp > now) return std::nullopt;
  auto age = static_cast<std::uint64_t>(now - *pod.creationTimestamp);
  if (age <= max + extra) return std::nullopt;
  return "pod is " + formatAge(age) + " old, " + lifetimeText(max, extra, pod, false);
}

bool kindIncluded(const Args& a, api::ContainerKind k) {
  if (k == api::ContainerKind::Init) return a.includingInitContainers;
  if (k == api::ContainerKind::Ephemeral) return a.includingEphemeralContainers;
  return true;
}

// Upstream's order: phase, status reason, then the containers' waiting and terminated reasons.
std::optional<std::string> matchState(const Args& a, const api::Pod& pod) {
  if (contains(a.states, api::toString(pod.phase))) return "phase is " + std::string(api::toString(pod.phase));
  const api::PodStatusDetail& st = pod.status();
  if (!st.reason.empty() && contains(a.states, st.reason.view())) return "status reason is " + st.reason.str();
  for (const api::ContainerStatus& cs : st.containers) {
    if (!kindIncluded(a, cs.kind)) continue;
    if (!cs.waitingReason.empty() && contains(a.states, cs.waitingReason.view()))
      return std::string(kindName(cs.kind)) + " is waiting with reason " + cs.waitingReason.str();
    if (cs.terminated() && !cs.terminatedReason.empty() && contains(a.states, cs.terminatedReason.view()))
      return std::string(kindName(cs.kind)) + " terminated with reason " + cs.terminatedReason.str();
  }
  return std::nullopt;
}

std::string describeCondition(const api::PodCondition& c) {
  std::string out = "condition " + std::string(c.type()) + "=" + std::string(c.status());
  if (!c.reason().empty()) out += " (reason " + std::string(c.reason()) + ")";
  return out;
}

// Any filter matching any condition (upstream's OR of ORs). With a minimum time since the last
// transition, a condition without a lastTransitionTime, or one in the future, does not match;
// the time compares inclusively, unlike maxPodLifeTimeSeconds.
std::optional<std::string> matchCondition(const Args& a, const api::Pod& pod, api::Timestamp now) {
  const auto& conditions = pod.status().conditions;
  for (const ConditionFilter& f : a.conditions) {
    for (const api::PodCondition& c : conditions) {
      if (!f.type.empty() && c.type() != f.type) continue;
      if (!f.status.empty() && c.status() != f.status) continue;
      if (!f.reason.empty() && c.reason() != f.reason) continue;
      if (!f.minTimeSinceLastTransitionSeconds) return describeCondition(c);
      auto at = c.lastTransitionTime();
      if (!at || *at > now) continue;
      auto idle = static_cast<std::uint64_t>(now - *at);
      if (idle < *f.minTimeSinceLastTransitionSeconds) continue;
      return describeCondition(c) + " for " + formatAge(idle) + ", minTimeSinceLastTransitionSeconds is " +
             std::to_string(*f.minTimeSinceLastTransitionSeconds);
    }
  }
  return std::nullopt;
}

// Regular containers, and init containers with includingInitContainers; never ephemeral ones
// (upstream).
std::optional<std::string> matchExitCode(const Args& a, const api::Pod& pod) {
  for (const api::ContainerStatus& cs : pod.status().containers) {
    if (!cs.terminated() || cs.kind == api::ContainerKind::Ephemeral) continue;
    if (cs.kind == api::ContainerKind::Init && !a.includingInitContainers) continue;
    if (std::find(a.exitCodes.begin(), a.exitCodes.end(), *cs.exitCode) != a.exitCodes.end())
      return std::string(kindName(cs.kind)) + " exited with code " + std::to_string(*cs.exitCode);
  }
  return std::nullopt;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return "[" + out + "]";
}

// The first of the plugin's criteria, in the order they are checked, that the pod does not meet.
enum class Unmet { ListFilter, OwnerKinds, Age, States, Conditions, ExitCodes };

// Skip: a criterion the pod does not meet, said with the numbers.
struct NotMet {
  Unmet criterion;
  const Args* args;
  const api::Pod* pod;
  api::Timestamp now;
  std::uint64_t extra;  // the pod's lifetime jitter
  std::string text() const;
};

std::string NotMet::text() const {
  const Args& a = *args;
  switch (criterion) {
    case Unmet::ListFilter: return a.filter.whyNot(*pod);
    case Unmet::OwnerKinds:
      return a.ownerKindsInclude.empty()
                 ? "excluded: an owner's kind is in ownerKinds.exclude " + joined(a.ownerKindsExclude)
                 : "excluded: no owner's kind is in ownerKinds.include " + joined(a.ownerKindsInclude);
    case Unmet::Age:
      if (!pod->creationTimestamp || *pod->creationTimestamp > now)
        return "not a candidate: the pod has no creationTimestamp in the past";
      return "not a candidate: pod is " + formatAge(static_cast<std::uint64_t>(now - *pod->creationTimestamp)) +
             " old, " + lifetimeText(*a.maxPodLifeTimeSeconds, extra, *pod, true);
    case Unmet::States:
      return "not a candidate: phase " + std::string(api::toString(pod->phase)) +
             ", no status or container reason is in states " + joined(a.states);
    case Unmet::Conditions:
      return "not a candidate: no condition matches the plugin's conditions (type, status, reason and "
             "minTimeSinceLastTransitionSeconds)";
    case Unmet::ExitCodes: return "not a candidate: no container exited with one of exitCodes";
  }
  return "not a candidate";
}

}  // namespace

std::uint64_t stableHash(std::string_view text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// The UID, which the API server gives each pod once; a pod without one (a hand-written snapshot)
// by its namespace and name.
std::uint64_t LifetimeJitter::extraSeconds(const api::Pod& pod) const {
  if (seconds == 0) return 0;
  const std::string key = pod.uid.empty() ? pod.ns.str() + "/" + pod.name : pod.uid.str();
  return stableHash(key) % seconds;
}

std::string formatAge(std::uint64_t seconds) { return durationText(static_cast<double>(seconds)); }

framework::Verdict PodLifeTime::judge(const api::Pod& pod, api::Timestamp now) const {
  const std::uint64_t extra = args_.maxPodLifeTimeSeconds ? jitter_.extraSeconds(pod) : 0;
  auto unmet = [&](Unmet u) { return framework::Verdict::skip(NotMet{u, &args_, &pod, now, extra}); };
  if (!args_.filter.allows(pod)) return unmet(Unmet::ListFilter);
  if (!ownerKindsAllow(args_, pod)) return unmet(Unmet::OwnerKinds);
  std::string reason;  // every criterion met, "; "-joined
  auto met = [&](std::optional<std::string> part) {
    if (!part) return false;
    reason += (reason.empty() ? "" : "; ") + *part;
    return true;
  };
  if (args_.maxPodLifeTimeSeconds && !met(matchAge(*args_.maxPodLifeTimeSeconds, extra, pod, now)))
    return unmet(Unmet::Age);
  if (!args_.states.empty() && !met(matchState(args_, pod))) return unmet(Unmet::States);
  if (!args_.conditions.empty() && !met(matchCondition(args_, pod, now))) return unmet(Unmet::Conditions);
  if (!args_.exitCodes.empty() && !met(matchExitCode(args_, pod))) return unmet(Unmet::ExitCodes);
  return framework::Verdict::candidate(std::move(reason));
}

std::optional<api::Timestamp> PodLifeTime::eligibleAt(const api::Pod& pod, api::Timestamp now) const {
  if (judge(pod, now).isCandidate()) return std::nullopt;
  // Each criterion, once met, stays met as time passes, so the answer is the first of the times at
  // which one criterion becomes met for which every other one is met too.
  std::vector<api::Timestamp> times;
  if (args_.maxPodLifeTimeSeconds && pod.creationTimestamp)
    times.push_back(*pod.creationTimestamp +
                    static_cast<api::Timestamp>(*args_.maxPodLifeTimeSeconds + jitter_.extraSeconds(pod)) + 1);
  for (const ConditionFilter& f : args_.conditions) {
    if (!f.minTimeSinceLastTransitionSeconds) continue;
    for (const api::PodCondition& c : pod.status().conditions)
      if (auto at = c.lastTransitionTime())
        times.push_back(*at + static_cast<api::Timestamp>(*f.minTimeSinceLastTransitionSeconds));
  }
  std::sort(times.begin(), times.end());
  for (api::Timestamp t : times)
    if (t > now && judge(pod, t).isCandidate()) return t;
  return std::nullopt;
}

Status PodLifeTime::deschedule(framework::Handle& h) {
  const api::Timestamp now = now_();
  struct Candidate {
    const api::Pod* pod;
    framework::Verdict verdict;
  };
  std::vector<Candidate> candidates;
  for (const api::Node* node : h.nodes()) {
    for (const api::Pod* pod : h.candidatesOnNode(*node, framework::PodPhases::All)) {
      framework::Verdict verdict = judge(*pod, now);
      // As upstream, the evictor's filters pick the candidates, so a pod they keep is not reported.
      if (h.admit(*pod, verdict)) candidates.push_back({pod, std::move(verdict)});
    }
  }
  // Oldest first, so that limits and budgets spare the youngest. Upstream's zero time sorts a pod
  // without a creationTimestamp first; ties keep node then pod order.
  auto created = [](const Candidate& c) {
    return c.pod->creationTimestamp.value_or(std::numeric_limits<api::Timestamp>::min());
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Candidate& a, const Candidate& b) { return created(a) < created(b); });
  for (const Candidate& c : candidates) {
    framework::EvictResult res = h.evict(*c.pod, c.verdict.reason);
    if (res.stopsPlugin()) break;
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<PodLifeTime>(
      kName, decodeArgs, [](const Args&, const policy::RawArgs&, const framework::BuildContext& ctx) {
        return Result<LifetimeJitter>(LifetimeJitter{ctx.podLifeTimeJitterSeconds});
      });
}

}  // namespace kdesched::plugins::podlifetime
