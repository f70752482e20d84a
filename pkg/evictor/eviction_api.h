// The HTTP side of the API sink, as the evictor needs it: one Eviction POST and one Event per
// decision. Plain values only, so the API client can implement it (kube::KubeEvictionApi) without
// depending on the evictor, and tests can fake it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kdesched::evictor {

struct EvictionRequest {
  std::string ns;
  std::string name;
  std::string uid;  // sent as a precondition: never evict a same-named replacement
  std::optional<std::int64_t> gracePeriodSeconds;
  std::string reasonAnnotation;  // "triggered by <profile>/<plugin>: <reason>"
};

struct ApiAnswer {
  int status = 0;                 // HTTP status; 0 = no answer (connection failed, timeout, cancelled)
  std::string reason;             // Status.reason ("TooManyRequests", "NotFound", ...)
  std::string message;            // Status.message, or the transport error
  bool disruptionBudget = false;  // a 429 caused by a PodDisruptionBudget (Status.details.causes)
  bool cancelled = false;         // no answer because the request was cut short (shutdown)
  double seconds = 0;             // from sending the request to its answer (or to giving up)
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

}  // namespace kdesched::evictor
