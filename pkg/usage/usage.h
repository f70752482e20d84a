// Actual resource usage, as a metrics source reported it, for the cycles that balance by usage
// (LowNodeUtilization with `metricsUtilization`). One model whoever fills it: `kdesched plan` from
// NodeMetrics/PodMetrics in the snapshot and a saved Prometheus answer, the daemon from its
// collectors. A cycle receives it whole and immutable (like the cluster snapshot), so every plugin
// of the cycle sees the same numbers and a plan is reproducible.
//
// Nothing here falls back to requests: a source that gave nothing is marked `down`, a node
// without a usable sample is simply absent, and the plugin decides what that means (it skips).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/symbol.h"
#include "pkg/api/types.h"

namespace kdesched::usage {

// Upstream's api.MetricsSource values, spelled as policies spell them.
enum class Source : std::uint8_t { KubernetesMetrics, Prometheus };
std::string_view toString(Source s);  // "KubernetesMetrics", "Prometheus"

// The pseudo-resource a Prometheus query's score is tracked under, with a capacity of 100 units
// (upstream's nodeutilization.MetricResource).
inline const api::Symbol& kMetricResource() {
  static const api::Symbol s("MetricResource");
  return s;
}

// A node's usage as its source measured it. KubernetesMetrics fills cpu and memory (NodeMetrics
// `usage`), Prometheus fills score (the query's value, meant to be in [0, 1]; a NaN or an infinity
// is kept as it came so the plugin can say why it left the node out).
struct NodeSample {
  std::optional<std::int64_t> cpuMilli;
  std::optional<std::int64_t> memoryBytes;
  std::optional<double> score;
  api::Timestamp takenAt = 0;  // when the source measured it (wall clock, whole seconds)
};

// A pod's usage in 16 bytes: the store holds 150k pods at scale S3, and this is all a pod adds.
// Keyed by a 64-bit hash of namespace/name (PodMetrics carry no UID); two pods hashing alike are
// both dropped rather than confused (PodUsageTable::finish).
struct PodSample {
  std::uint64_t key = 0;
  std::uint32_t cpuMilli = 0;  // summed over the pod's containers, saturating at 2^32-1
  std::uint32_t memoryKi = 0;  // KiB, rounded up, saturating (4 TiB)
};
static_assert(sizeof(PodSample) == 16, "per-pod usage must stay at 16 bytes");

std::uint64_t podKey(std::string_view ns, std::string_view name);

// Per-pod usage of one source, sorted by key for binary search: no per-entry allocation.
class PodUsageTable {
 public:
  // Adds a pod's usage; call finish() before the first lookup.
  void add(std::string_view ns, std::string_view name, std::int64_t cpuMilli, std::int64_t memoryBytes);
  // Sorts, and drops keys seen twice (a duplicate or a hash collision): unknown beats wrong.
  void finish();
  struct Usage {
    std::int64_t cpuMilli = 0;
    std::int64_t memoryBytes = 0;
  };
  std::optional<Usage> find(const api::Pod& pod) const;
  std::optional<Usage> find(std::string_view ns, std::string_view name) const;
  std::size_t size() const { return samples_.size(); }
  bool empty() const { return samples_.empty(); }
  std::size_t dropped() const { return dropped_; }

 private:
  std::vector<PodSample> samples_;
  std::size_t dropped_ = 0;
};

// Everything one source gave for this cycle.
struct SourceReadings {
  Source source = Source::KubernetesMetrics;
  // Who measured, for eviction reasons and logs: "metrics-server", "Prometheus".
  std::string origin;
  // Set when the source gave nothing usable this cycle (unreachable, an error answer): why.
  std::optional<std::string> down;
  std::unordered_map<api::Symbol, NodeSample> nodes;
  // KubernetesMetrics only: PodMetrics, and when they were taken (the oldest pod's timestamp).
  PodUsageTable pods;
  std::optional<api::Timestamp> podsTakenAt;
  // What decoding set aside, one line each, for the operator (a pod whose container lacks cpu, an
  // instance named twice by a query).
  std::vector<std::string> notes;

  const NodeSample* node(const api::Symbol& name) const;
};

// The usage a cycle runs with.
struct ClusterUsage {
  // Samples older than this before `asOf` are stale: the node is left out. metrics-server scrapes
  // every 15-60 s, so three minutes is several missed scrapes.
  static constexpr std::int64_t kDefaultMaxSampleAgeSeconds = 180;

  std::optional<SourceReadings> kubernetesMetrics;
  std::map<std::string, SourceReadings> prometheus;  // by query text
  // The time staleness is judged against: live, the cycle's start; in a plan, --now or else the
  // newest sample (an old snapshot is not stale as a whole).
  api::Timestamp asOf = 0;
  std::int64_t maxSampleAgeSeconds = kDefaultMaxSampleAgeSeconds;

  const SourceReadings* prometheusFor(const std::string& query) const;
  // The newest takenAt of every sample held, or nullopt when there is none.
  std::optional<api::Timestamp> newestSample() const;
};

// What the configured plugins need from the sources, so the one filling a ClusterUsage asks only
// for that (the daemon's collectors, the plan's checks of the snapshot).
struct Needs {
  struct Consumer {
    std::string profile;
    std::string plugin;
    Source source = Source::KubernetesMetrics;
    std::string query;  // Prometheus only
  };
  std::vector<Consumer> consumers;

  bool kubernetesMetrics() const;
  std::vector<std::string> prometheusQueries() const;  // distinct, in order of first use
  bool empty() const { return consumers.empty(); }
};

// The sources the policy's top level configures (metricsCollector, metricsProviders).
struct Providers {
  bool kubernetesMetrics = false;
  bool prometheus = false;
};

// Upstream's metrics collector smoothing: round(0.9·previous + 0.1·sample), applied every 5 s.
std::int64_t weightedAverage(std::int64_t previous, std::int64_t sample);

}  // namespace kdesched::usage
