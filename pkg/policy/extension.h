// kdesched's policy extension: the top-level `kdesched:` block of a DeschedulerPolicy.
//   kdesched:
//     triggers:      {enabled: true, debounce: 1s, quiet: 100ms, cpuShare: 0.25, balanceDebounce: 30s,
//                     rolloutGrace: 15s}
//     antiFlapping:  {ownerCooldown: 5m, maxEvictionsPerMinute: 30, backoffAfter: 3,
//                     backoffInitial: 10m, backoffMax: 6h}
//     blockedEvents: {enabled: true, period: 1h, perMinute: 10}
//     moves:         {enabled: false, maxReplicas: 1, namespaces: {include|exclude}, labelSelector,
//                     deadline: 0s (the Deployment's progressDeadlineSeconds)}
//     budgets:       [{name, schedule, timeZone, duration, maxEvictions, maxUnavailablePerOwner,
//                      minIntervalPerOwner, scope}]   (pkg/policy/budgets.h)
//     podLifeTime:   {jitter: 0s}
//     compat:        upstream | {<switch>: upstream}   (pkg/policy/compat.h)
// Upstream descheduler ignores unknown top-level keys, so the same file still works there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pkg/base/status.h"
#include "pkg/policy/args.h"
#include "pkg/policy/budgets.h"
#include "pkg/policy/compat.h"
#include "pkg/policy/policy.h"

namespace kdesched::policy {

struct TriggerConfig {
  bool enabled = true;
  double debounceSeconds = 1;          // at most this long after the first event of a batch, one scoped run
  double quietSeconds = 0.1;           // ...and this long after its first event that may break a rule
  double cpuShare = 0.25;              // of one core (CPU time), at most, for scoped runs under sustained churn
  double balanceDebounceSeconds = 30;  // pod deletions / node additions: one balance run per window
  double rolloutGraceSeconds = 15;     // a candidate whose own controller is mid-rollout waits this long
  // Not policy fields: bounds of the deadline queue (pkg/trigger/deadlines.h).
  double deadlineHorizonSeconds = 600;  // deadlines further out wait for a rescan (every half horizon)
  std::size_t maxDeadlines = 10000;
};

struct AntiFlappingConfig {
  double ownerCooldownSeconds = 300;  // between two evictions of pods of the same controller; 0: off
  double maxEvictionsPerMinute = 30;  // across the process; 0: unlimited
  int backoffAfter = 3;  // consecutive flaps (replacement back on the same node, or the same rule broken again)
  double backoffInitialSeconds = 600;
  double backoffMaxSeconds = 6 * 3600;
};

// "Why not" Events (pkg/evictor/blocked_events.h). On by default; off under `compat: upstream`
// (every switch upstream's) unless `enabled` is written.
struct BlockedEventsConfig {
  bool enabled = true;
  double periodSeconds = 3600;  // one Event per pod and refusal within this
  double perMinute = 10;        // all pods together; 0: only the period bounds them
};

// Make-before-break moves (pkg/moves): a single-replica Deployment's pod that a plugin picks is
// replaced by a rollout restart instead of an eviction. Off by default; `compat: upstream` turns
// them off whatever is written.
struct MovesConfig {
  bool enabled = false;
  std::int32_t maxReplicas = 1;  // a restart replaces every replica: no move for more than this
  std::optional<Namespaces> namespaces;
  std::optional<api::LabelSelector> labelSelector;
  double deadlineSeconds = 0;  // the new pod Ready within this; 0: the Deployment's progressDeadlineSeconds
};

// PodLifeTime's lifetimes spread out: each pod lives up to `jitter` longer than
// maxPodLifeTimeSeconds, by an amount fixed by its UID (pkg/plugins/podlifetime), so the pods of
// one rollout do not all expire in the same second. Off (0) by default and under `compat: upstream`.
struct PodLifeTimeConfig {
  std::uint64_t jitterSeconds = 0;
};

struct Extension {
  TriggerConfig triggers;
  AntiFlappingConfig antiFlapping;
  BlockedEventsConfig blockedEvents;
  MovesConfig moves;
  // Schedulable disruption budgets (pkg/policy/budgets.h); none unless configured, and none under
  // `compat: upstream` (read and checked, then dropped: upstream has no such thing).
  std::vector<Budget> budgets;
  PodLifeTimeConfig podLifeTime;
  Compat compat;  // the deliberate differences from upstream, each switchable
};

// Decodes `policy.extension` strictly (unknown keys are errors with a did-you-mean), with defaults
// for everything unset. Errors name the field: `kdesched.triggers.debounce: ...`.
Result<Extension> decodeExtension(const RawArgs& raw);

}  // namespace kdesched::policy
