// The live sink: evictions through the policy/v1 Eviction subresource, one Event per decision.
// The HTTP side is the EvictionApi interface (implemented over the API client by
// kube::KubeEvictionApi), so this stays testable and the evictor does not depend on the client.
#pragma once

#include <string>

#include "pkg/evictor/eviction_api.h"
#include "pkg/evictor/sink.h"

namespace kdesched::evictor {

// The kind of failure an answer is: by its HTTP status, or why there was none.
framework::ApiFailure apiFailureOf(const ApiAnswer& a);

struct ApiSinkOptions {
  std::optional<std::int64_t> gracePeriodSeconds;  // policy gracePeriodSeconds
  bool failureEvents = false;                      // policy evictionFailureEventNotification
};

class ApiSink : public Sink {
 public:
  ApiSink(EvictionApi& api, ApiSinkOptions options) : api_(api), options_(options) {}
  framework::EvictResult evict(const Decision& d) override;
  void refused(const RefusedDecision& r) override;

 private:
  EvictionApi& api_;
  ApiSinkOptions options_;
};

}  // namespace kdesched::evictor
