// Upstream: PodLifeTime (plugins/podlifetime/). A deschedule plugin: evicts pods, of any phase,
// that match every criterion set (older than maxPodLifeTimeSeconds, in one of `states`, with a
// matching condition, with a container that exited with one of `exitCodes`), oldest first.
#pragma once

#include <optional>
#include <string>

#include "pkg/framework/registry.h"
#include "pkg/plugins/podlifetime/args.h"

namespace kdesched::plugins::podlifetime {

// kdesched's lifetime jitter (the policy's `kdesched.podLifeTime.jitter`): each pod lives
// maxPodLifeTimeSeconds plus extraSeconds(pod), a stable function of its UID in [0, seconds), so
// plan, dry run and a restarted daemon agree on every pod's deadline, and one rollout's pods
// (created in the same second) expire spread over the jitter instead of all at once.
struct LifetimeJitter {
  std::uint64_t seconds = 0;  // 0: off
  std::uint64_t extraSeconds(const api::Pod& pod) const;
};

class PodLifeTime : public framework::DeschedulePlugin, public framework::DeadlinePlugin {
 public:
  PodLifeTime(Args args, LifetimeJitter jitter, framework::WallSeconds now)
      : args_(std::move(args)), jitter_(jitter), now_(std::move(now)) {}
  std::string_view name() const override { return kName; }
  bool readsPodConditions() const override { return !args_.conditions.empty(); }
  Status deschedule(framework::Handle& h) override;

  // A candidate when the pod meets every criterion set (the reason says how, in plain words); else
  // a skip naming the first criterion it does not meet. Ignores the evictor's filters.
  framework::Verdict judge(const api::Pod& pod, api::Timestamp now) const;
  // The first time judge() finds a candidate: the age passing maxPodLifeTimeSeconds, a matching condition
  // reaching minTimeSinceLastTransitionSeconds, whichever comes last when both are set.
  std::optional<api::Timestamp> eligibleAt(const api::Pod& pod, api::Timestamp now) const override;

 private:
  Args args_;
  LifetimeJitter jitter_;
  framework::WallSeconds now_;
};

framework::PluginRegistration registration();

// 64-bit FNV-1a: a hash that no library version or platform changes.
std::uint64_t stableHash(std::string_view text);

// Seconds as "2h1m", "45m10s", "30s", "0s": whole units, zero units left out.
std::string formatAge(std::uint64_t seconds);

}  // namespace kdesched::plugins::podlifetime
