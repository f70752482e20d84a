// The live sink: evictions through the policy/v1 Eviction subresource, one Event per decision.
// The HTTP side is the EvictionApi interface (implemented over the API client by
// kube::KubeEvictionApi), so this stays testable and the evictor does not depend on the client.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/base/clock.h"

#include "pkg/evictor/blocked_events.h"
#include "pkg/evictor/eviction_api.h"
#include "pkg/evictor/live_conditions.h"
#include "pkg/evictor/sink.h"

namespace kdesched::evictor {

// The kind of failure an answer is: by its HTTP status, or why there was none.
framework::ApiFailure apiFailureOf(const ApiAnswer& a);

struct ApiSinkOptions {
  std::optional<std::int64_t> gracePeriodSeconds;  // policy gracePeriodSeconds
  bool failureEvents = false;                      // policy evictionFailureEventNotification
  // With a clock, a refusal that repeats the one logged for the same pod (same refusal, same
  // refuser) within `repeatQuiet` is logged at debug, not info: a triggered run every second that
  // meets the same rate limit or PDB says so once, not 60 times a minute. Without one, every
  // refusal is an info line.
  Clock* clock = nullptr;
  std::chrono::seconds repeatQuiet{600};
  // An eviction answered 5xx or not at all may still be carried out (a 504 comes from the API
  // server's timeout filter while its handler goes on). The pod is looked up after each of these
  // waits (on `clock`; without one, at once) until it is gone; still there after the last, the
  // eviction failed; never known (the lookups failed too), it counts as done: its limit slot and
  // PDB budget stay spent and no later plugin picks the pod, the safe side.
  // Asked right before each Eviction POST is sent (null: no leader election). The cycle's gate asks
  // when the eviction is admitted; with requests in flight (--eviction-concurrency) it is sent a
  // little later, and Lease-based election has no fencing.
  const Leadership* leader = nullptr;
  // "Why not" Events for the refusals (null: none); the refusal's log line says what became of it.
  BlockedEvents* blocked = nullptr;
  std::vector<std::chrono::milliseconds> confirmWaits{std::chrono::milliseconds(500), std::chrono::milliseconds(1000),
                                                      std::chrono::milliseconds(2000)};
};

class ApiSink : public Sink {
 public:
  ApiSink(EvictionApi& api, ApiSinkOptions options) : api_(api), options_(std::move(options)) {}
  framework::EvictResult evict(const Decision& d) override;
  void refused(const RefusedDecision& r) override;

 private:
  // A make-before-break move: the pod's Deployment restarted (a rollout), no eviction.
  framework::EvictResult move(const Decision& d);
  // Whether this refusal repeats the one last logged at info for its pod, within repeatQuiet.
  bool repeats(const RefusedDecision& r);
  // Posts the refusal's DeschedulingBlocked Event if it gets one; says what became of it.
  std::string_view blockedEvent(const Decision& d, const framework::EvictResult& r);
  // The eviction was sent and its answer `a` (5xx, none) says nothing certain: look the pod up.
  PodCheck confirm(const Decision& d);
  framework::EvictResult evicted(const Decision& d, const EvictionRequest& req, const ApiAnswer& a,
                                 const std::string& confirmed);
  framework::EvictResult failed(const Decision& d, const EvictionRequest& req, const ApiAnswer& a,
                                const std::string& outcome);

  EvictionApi& api_;
  ApiSinkOptions options_;
  struct Logged {
    std::string what;  // refusal and refuser
    Clock::TimePoint at;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Logged> logged_;  // by pod UID (namespace/name without one)
};

}  // namespace kdesched::evictor
