// The explicit plugin registry: one function (plugins/registry.cpp: registerDefaultPlugins) lists
// every plugin. No static self-registration (a static library link silently drops such objects).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/base/status.h"
#include "pkg/framework/plugin.h"
#include "pkg/policy/policy.h"
#include "pkg/usage/usage.h"

namespace kdesched::framework {

// Whole seconds since the epoch by a Clock's wall time: the "now" that age-based checks
// (minPodAge) compare object timestamps with. Callable, so a plugin keeps it as a function.
class WallSeconds {
 public:
  WallSeconds() : clock_(systemClock()) {}
  explicit WallSeconds(std::shared_ptr<Clock> clock) : clock_(std::move(clock)) {}
  // The system's monotonic clock with the wall clock pinned at `at` (`kdesched plan --now`, tests).
  static WallSeconds pinned(api::Timestamp at);

  api::Timestamp operator()() const;
  const std::shared_ptr<Clock>& clock() const { return clock_; }

 private:
  std::shared_ptr<Clock> clock_;
};

// How a MakeRoomForPendingPods try for one pending pod ended (pkg/plugins/makeroomforpendingpods/
// tries.h): `result` is scheduled, scheduled_elsewhere, gone or still_pending; `note` says it for
// people (the Event's note).
struct PendingOutcome {
  std::string ns, name, uid, result, note;
};

// What a plugin factory may consult while decoding its args.
struct BuildContext {
  // Resolves a PriorityClass name to its value (DefaultEvictor's priorityThreshold.name). In plan
  // mode it reads the snapshot; live, the API server.
  std::function<Result<std::int32_t>(const std::string& name)> priorityClassValue;
  // The clock for age-based checks, and for the cycle's timings: the system clock live; plan mode
  // pins its wall time with --now.
  WallSeconds now;
  // Where a factory reports args that load, as upstream loads them, but do not do what they seem
  // to (an unknown nodeAffinityType value, skipped). Each line starts with the field path.
  // buildProfiles points it at the policy's warnings, which the daemon logs and `plan` prints; when
  // null, warnings are dropped.
  policy::Warnings* warnings = nullptr;
  // The metrics sources the policy's top level configures; plugins that balance by usage check
  // theirs against it. buildProfiles fills it from the policy.
  usage::Providers metricsProviders;
  // PodLifeTime's lifetime jitter in seconds (the policy's `kdesched.podLifeTime.jitter`; 0: off).
  // The engine fills it from the decoded extension.
  std::uint64_t podLifeTimeJitterSeconds = 0;
  // MakeRoomForPendingPods: the wait before a pending pod is tried again, doubling per try (the
  // engine fills them from `kdesched.antiFlapping`'s backoffInitial and backoffMax), and where each
  // try's outcome goes besides the log (the daemon: kdesched_pending_helped_total and an Event).
  double pendingRetryInitialSeconds = 600;
  double pendingRetryMaxSeconds = 6 * 3600;
  std::function<void(const PendingOutcome&)> pendingOutcome;
  void warn(std::string line) const {
    if (warnings) warnings->push_back(std::move(line));
  }
};

// Decodes, validates and defaults the args at `args` (strictly: unknown keys are errors), then
// builds the plugin. Errors name the field path; warnings go to ctx.warn.
using PluginFactory =
    std::function<Result<std::unique_ptr<Plugin>>(const policy::RawArgs& args, const BuildContext& ctx)>;

struct PluginRegistration {
  std::string name;
  PluginFactory factory;
  // Upstream has no such plugin: a policy with `kdesched: {compat: upstream}` may not enable it
  // (engine.cpp), as upstream's decisions exactly cannot include it.
  bool kdeschedOnly = false;
};

class Registry {
 public:
  // Fails, and keeps the first registration, when the name is taken (two plugins under one name
  // would make the policy's choice depend on the order of registration) or when the name or the
  // factory is empty.
  [[nodiscard]] Status add(PluginRegistration r);
  const PluginRegistration* find(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted

 private:
  std::map<std::string, PluginRegistration> plugins_;
};

}  // namespace kdesched::framework
