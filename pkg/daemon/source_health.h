// The health of one usage source as an operator sees it: kdesched_usage_source_up{source}, set at
// every collection or query, and one log line when a part of the source starts failing and one
// when it answers again, never one per success (the collector runs every 5 s).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "pkg/metrics/metrics.h"

namespace kdesched::daemon {

class SourceHealth {
 public:
  // `source`: the metric's label (KubernetesMetrics, Prometheus); `origin`: who answers, for the
  // log ("metrics-server", "Prometheus"). `metrics` may be null.
  SourceHealth(std::string source, std::string origin, metrics::Metrics* metrics);

  // One attempt of `part` ("NodeMetrics list", "PodMetrics list", "query <q>"): `error` unset
  // when it answered. The source is up while none of its parts is failing.
  void report(const std::string& part, const std::optional<std::string>& error);
  bool up() const;

 private:
  const std::string source_;
  const std::string origin_;
  metrics::Metrics* metrics_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> failing_;  // part → its last error
};

}  // namespace kdesched::daemon
