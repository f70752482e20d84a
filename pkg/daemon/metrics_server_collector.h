// Usage from metrics-server (metrics.k8s.io/v1beta1) for the live modes, as upstream's metrics
// collector keeps it: every 5 s the nodes' usage is read and folded into a moving average per node
// (the first sample as it is, then round(0.9·average + 0.1·sample)). Unlike upstream, each
// collection is ONE paginated LIST of NodeMetrics (upstream GETs each node), and the pods' usage is
// ONE PodMetrics LIST per cycle that needs it (upstream GETs a pod's metrics for each pod it
// considers while it evicts).
//
// A collection that fails keeps the averages (upstream does too) but marks the source down until
// one succeeds: a cycle then skips balancing by usage rather than decide on numbers that are no
// longer being refreshed. Nodes that are gone from the cluster are forgotten.
//
// Threads: start() runs collections on a thread of its own; readings() is called by the cycle's
// thread. Both may run at once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "pkg/api/decode.h"
#include "pkg/base/clock.h"
#include "pkg/daemon/source_health.h"
#include "pkg/kube/client.h"
#include "pkg/usage/usage.h"

namespace kdesched::daemon {

inline constexpr std::string_view kNodeMetricsPath = "/apis/metrics.k8s.io/v1beta1/nodes";
inline constexpr std::string_view kPodMetricsPath = "/apis/metrics.k8s.io/v1beta1/pods";

class MetricsServerCollector {
 public:
  // Upstream's collection period.
  static constexpr std::chrono::seconds kPeriod{5};
  // Whether the cluster still has a node of that name (the store's).
  using NodeExists = std::function<bool(const std::string&)>;

  MetricsServerCollector(kube::Client& client, std::shared_ptr<Clock> clock, NodeExists nodeExists,
                         SourceHealth& health);
  ~MetricsServerCollector();
  MetricsServerCollector(const MetricsServerCollector&) = delete;
  MetricsServerCollector& operator=(const MetricsServerCollector&) = delete;

  // One collection: one NodeMetrics LIST folded into the averages. False when it failed (the
  // source is then down until a collection succeeds). The first collection is the first LIST
  // with a sample of one of the cluster's nodes: one that lists none of them (metrics-server
  // just started) answers, but the collector stays unsynced.
  bool collect(Cancellation* cancel = nullptr);

  // Collects every kPeriod, measured from each collection's start (upstream's NonSlidingUntil), on
  // a thread of its own until stop() or `parent` is cancelled.
  void start(Cancellation& parent);
  void stop();

  // Waits up to `bound` for the first collection, looking every second as upstream does. False
  // when none came in time or `stop` fired.
  bool waitForFirst(Clock::Duration bound, Cancellation& stop);
  bool synced() const;

  // A cycle's KubernetesMetrics reading: the averages and, with `pods`, one PodMetrics LIST. It
  // is `down` when no collection succeeded yet, the last one failed, or the pod LIST failed.
  usage::SourceReadings readings(bool pods, Cancellation* cancel = nullptr);

 private:
  struct Average {
    std::optional<std::int64_t> cpuMilli;
    std::optional<std::int64_t> memoryBytes;
    api::Timestamp takenAt = 0;
  };
  std::size_t fold(const usage::SourceReadings& sample);
  std::optional<std::string> listPods(usage::SourceReadings& out, Cancellation* cancel);

  kube::Client& client_;
  std::shared_ptr<Clock> clock_;
  NodeExists nodeExists_;
  SourceHealth& health_;

  std::mutex collectMu_;        // one collection at a time; guards nodeParser_
  api::JsonParser nodeParser_;  // reused: a LIST every 5 s must not allocate its buffers anew
  std::mutex podsMu_;           // guards podParser_
  api::JsonParser podParser_;

  mutable std::mutex mu_;  // guards what follows
  std::unordered_map<std::string, Average> averages_;
  bool synced_ = false;
  bool listedNone_ = false;               // a LIST before the first collection had none of the nodes
  std::optional<std::string> lastError_;  // of the last collection; unset when it succeeded

  Cancellation stop_;
  std::unique_ptr<CancelSubscription> parentStop_;
  std::thread thread_;
};

// The error of a metrics.k8s.io LIST for logs and the plugin's skip line, with a hint when the
// answer says what is missing (RBAC, or metrics-server itself).
std::string describeMetricsListError(std::string_view what, const kube::ApiError& e);

}  // namespace kdesched::daemon
