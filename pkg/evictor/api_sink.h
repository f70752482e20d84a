// The live sink: evictions through the policy/v1 Eviction subresource, one Event per decision.
// The HTTP side is an interface (implemented in pkg/kube) so this stays testable and the evictor
// does not depend on the client.
#pragma once

#include <optional>
#include <string>

#include "pkg/evictor/sink.h"

namespace kdesched::evictor {

struct EvictionRequest {
  std::string ns;
  std::string name;
  std::string uid;  // sent as a precondition: never evict a same-named replacement
  std::optional<std::int64_t> gracePeriodSeconds;
  std::string reasonAnnotation;  // "triggered by <profile>/<plugin>: <reason>"
};

struct ApiAnswer {
  int status = 0;                 // HTTP status; 0 = no answer (connection failed, timeout)
  std::string reason;             // Status.reason ("TooManyRequests", "NotFound", ...)
  std::string message;            // Status.message, or the transport error
  bool disruptionBudget = false;  // a 429 caused by a PodDisruptionBudget (Status.details.causes)
};

struct PodEvent {
  std::string ns;
  std::string podName;
  std::string podUid;
  std::string type;    // Normal | Warning
  std::string reason;  // the plugin name, or EvictionFailed
  std::string action;  // Descheduled
  std::string note;
};

class EvictionApi {
 public:
  virtual ~EvictionApi() = default;
  virtual ApiAnswer evict(const EvictionRequest& r) = 0;
  // Best effort: a failed Event never fails the eviction.
  virtual void recordEvent(const PodEvent& e) = 0;
};

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
