// The usage decoders' simdjson-typed entry points, for .cpp files that already walk a document
// with simdjson (the snapshot loader): one NodeMetrics or PodMetrics object each.
#pragma once

#include <simdjson.h>

#include <string>

#include "pkg/usage/usage.h"

namespace kdesched::usage::detail {

struct NodeMetricsItem {
  std::string name;
  NodeSample sample;
};

struct PodMetricsItem {
  std::string ns;
  std::string name;
  api::Timestamp takenAt = 0;
  // Summed over the containers; unset when some container does not report the resource
  // (upstream then cannot account for the pod and does not evict it).
  std::optional<std::int64_t> cpuMilli;
  std::optional<std::int64_t> memoryBytes;
};

// Errors start with the field path (`usage.cpu: invalid quantity "x"`).
Status decodeNodeMetrics(simdjson::ondemand::object obj, NodeMetricsItem& out);
Status decodePodMetrics(simdjson::ondemand::object obj, PodMetricsItem& out);

// Adds a decoded item to a KubernetesMetrics reading.
void add(NodeMetricsItem item, SourceReadings& out);
void add(const PodMetricsItem& item, SourceReadings& out);

}  // namespace kdesched::usage::detail
