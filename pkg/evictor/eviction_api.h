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
  std::string action;  // Descheduled (Descheduling: a DeschedulingBlocked Event)
  std::string note;
  // Sent after every other queued Event, from a smaller queue (AsyncEvents): a "why not" Event
  // never delays or crowds out an eviction's.
  bool background = false;
  // What the Event is about: a Pod, or a Deployment (a move's outcome).
  std::string regardingKind = "Pod";
  std::string regardingApiVersion = "v1";
};

// `kubectl rollout restart` of one Deployment: its pod template's
// kubectl.kubernetes.io/restartedAt annotation set to `restartedAt`, with the UID and
// resourceVersion read when the move was decided as preconditions (409 when either changed).
struct RestartRequest {
  std::string ns;
  std::string name;
  std::string uid;
  std::string resourceVersion;
  std::string restartedAt;  // RFC 3339, as kubectl writes it
};

// What the API server holds of a pod, asked after an eviction whose answer said nothing certain (a
// 5xx, or no answer): a 504 can come while the server's handler goes on and evicts.
enum class PodPresence {
  Gone,     // 404, another pod of that name (a new UID), or the pod is being deleted
  Present,  // the same UID, not being deleted
  Unknown,  // the question failed too
};
struct PodCheck {
  PodPresence presence = PodPresence::Unknown;
  std::string detail;  // "404: not found", "deletionTimestamp 2026-12-06T10:00:00Z", the error
};

class EvictionApi {
 public:
  virtual ~EvictionApi() = default;
  virtual ApiAnswer evict(const EvictionRequest& r) = 0;
  // GET of the pod `ns`/`name`, judged against `uid`. Default: Unknown (nothing asked).
  virtual PodCheck checkPod(const std::string& /*ns*/, const std::string& /*name*/, const std::string& /*uid*/) {
    return {PodPresence::Unknown, "not checked"};
  }
  // GET of a namespaced apps/v1 object (`resource`: replicasets, deployments) into `body` (JSON).
  // Default: no answer (moves are not possible).
  virtual ApiAnswer getApps(const std::string& /*resource*/, const std::string& /*ns*/, const std::string& /*name*/,
                            std::string& /*body*/) {
    return {0, "", "not supported", false, false, 0};
  }
  virtual ApiAnswer restartDeployment(const RestartRequest& /*r*/) { return {0, "", "not supported", false, false, 0}; }
  // Best effort: a failed Event never fails the eviction.
  virtual void recordEvent(const PodEvent& e) = 0;
};

}  // namespace kdesched::evictor
