// The live sink: evictions through the policy/v1 Eviction subresource, one Event per decision.
// The HTTP side is the EvictionApi interface (implemented over the API client by
// kube::KubeEvictionApi), so this stays testable and the evictor does not depend on the client.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

#include "pkg/base/clock.h"

#include "pkg/evictor/eviction_api.h"
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
};

class ApiSink : public Sink {
 public:
  ApiSink(EvictionApi& api, ApiSinkOptions options) : api_(api), options_(std::move(options)) {}
  framework::EvictResult evict(const Decision& d) override;
  void refused(const RefusedDecision& r) override;

 private:
  // Whether this refusal repeats the one last logged at info for its pod, within repeatQuiet.
  bool repeats(const RefusedDecision& r);

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
