// "Why not" Events: a pod a plugin picked and the eviction chain (a filter, nodeFit, a limit, a PDB,
// anti-flapping) or the API server (a PDB's 429) refused gets one Normal Event, reason
// DeschedulingBlocked, saying which rule it breaks and what stopped its eviction, where
// `kubectl describe pod` shows it. Bounded twice: at most once per pod and refusal (kind and
// refuser) per `period`, and at most `perMinute` Events a minute for all pods together (a token
// bucket with one minute's worth of burst); beyond either the Event is not posted, and the refusal's
// log line says why. The Events go out on the sender's background lane (AsyncEvents), behind every
// eviction Event. Refusals that say nothing about the pod (shutdown, a stale cache, lost
// leadership, a failed request) get none.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pkg/base/clock.h"
#include "pkg/evictor/eviction_api.h"
#include "pkg/evictor/sink.h"

namespace kdesched::evictor {

struct BlockedEventsOptions {
  bool enabled = true;
  Clock::Duration period = std::chrono::hours(1);  // one Event per pod and refusal within this
  double perMinute = 10;                           // all pods together; 0: no bound but the period
};

class BlockedEvents {
 public:
  static constexpr std::string_view kReason = "DeschedulingBlocked";
  // Pods remembered at most; beyond, entries older than the period go (then all, the safe side:
  // one Event more, never one fewer).
  static constexpr std::size_t kMaxRemembered = 100000;

  BlockedEvents(BlockedEventsOptions options, Clock& clock);

  // What became of the refusal's Event: "posted" (`out` holds it), "off", "none" (a refusal without
  // one), "repeat" (posted for this pod and refusal within the period) or "budget" (over perMinute).
  std::string_view take(const Decision& d, const framework::EvictResult& r, PodEvent& out);

  // Whether a refusal of this kind says something about the pod.
  static bool worthAnEvent(framework::Refusal r);

 private:
  bool spend(Clock::TimePoint now);  // a token of the per-minute bucket, with mu_ held

  BlockedEventsOptions options_;
  Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Clock::TimePoint> posted_;  // pod UID + refusal -> when
  double tokens_;
  Clock::TimePoint refilled_;
};

// The Event's note: what the plugin wanted and what stopped it, e.g. "kdesched
// (default/RemovePodsViolatingInterPodAntiAffinity) would evict this pod from node-1: <reason>;
// blocked by PodDisruptionBudget shop/payment (pdb): <detail>".
std::string blockedNote(const Decision& d, const framework::EvictResult& r);

}  // namespace kdesched::evictor
