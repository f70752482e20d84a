#include "pkg/usage/usage.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kdesched::usage {
namespace {

std::uint32_t saturate(std::int64_t v) {
  if (v <= 0) return 0;
  constexpr auto kMax = std::numeric_limits<std::uint32_t>::max();
  return v >= static_cast<std::int64_t>(kMax) ? kMax : static_cast<std::uint32_t>(v);
}

// FNV-1a over the bytes, then splitmix64's finalizer so nearby names spread over all 64 bits.
std::uint64_t mix(std::uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::string_view toString(Source s) {
  switch (s) {
    case Source::KubernetesMetrics: return "KubernetesMetrics";
    case Source::Prometheus: return "Prometheus";
  }
  return "unknown";
}

std::uint64_t podKey(std::string_view ns, std::string_view name) {
  // A NUL between the two, which no Kubernetes name holds: "a" + "b/c" and "a/b" + "c" differ.
  std::uint64_t h = mix(0xcbf29ce484222325ULL, ns);
  h = mix(h, std::string_view("\0", 1));
  h = mix(h, name);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

void PodUsageTable::add(std::string_view ns, std::string_view name, std::int64_t cpuMilli, std::int64_t memoryBytes) {
  const std::int64_t ki = memoryBytes <= 0 ? 0 : memoryBytes / 1024 + (memoryBytes % 1024 != 0);
  samples_.push_back({podKey(ns, name), saturate(cpuMilli), saturate(ki)});
}

void PodUsageTable::finish() {
  std::sort(samples_.begin(), samples_.end(), [](const PodSample& a, const PodSample& b) { return a.key < b.key; });
  std::vector<PodSample> unique;
  unique.reserve(samples_.size());
  for (std::size_t i = 0; i < samples_.size();) {
    std::size_t j = i + 1;
    while (j < samples_.size() && samples_[j].key == samples_[i].key) ++j;
    if (j - i == 1)
      unique.push_back(samples_[i]);
    else
      dropped_ += j - i;
    i = j;
  }
  unique.shrink_to_fit();
  samples_ = std::move(unique);
}

std::optional<PodUsageTable::Usage> PodUsageTable::find(std::string_view ns, std::string_view name) const {
  const std::uint64_t key = podKey(ns, name);
  auto it = std::lower_bound(samples_.begin(), samples_.end(), key,
                             [](const PodSample& s, std::uint64_t k) { return s.key < k; });
  if (it == samples_.end() || it->key != key) return std::nullopt;
  return Usage{it->cpuMilli, static_cast<std::int64_t>(it->memoryKi) * 1024};
}

std::optional<PodUsageTable::Usage> PodUsageTable::find(const api::Pod& pod) const {
  return find(pod.ns.view(), pod.name);
}

const NodeSample* SourceReadings::node(const api::Symbol& name) const {
  auto it = nodes.find(name);
  return it == nodes.end() ? nullptr : &it->second;
}

const SourceReadings* ClusterUsage::prometheusFor(const std::string& query) const {
  auto it = prometheus.find(query);
  return it == prometheus.end() ? nullptr : &it->second;
}

std::optional<api::Timestamp> ClusterUsage::newestSample() const {
  std::optional<api::Timestamp> newest;
  auto consider = [&](api::Timestamp t) {
    if (!newest || t > *newest) newest = t;
  };
  auto scan = [&](const SourceReadings& r) {
    for (const auto& [name, sample] : r.nodes) consider(sample.takenAt);
    if (r.podsTakenAt) consider(*r.podsTakenAt);
  };
  if (kubernetesMetrics) scan(*kubernetesMetrics);
  for (const auto& [query, readings] : prometheus) scan(readings);
  return newest;
}

bool Needs::kubernetesMetrics() const {
  return std::any_of(consumers.begin(), consumers.end(),
                     [](const Consumer& c) { return c.source == Source::KubernetesMetrics; });
}

std::vector<std::string> Needs::prometheusQueries() const {
  std::vector<std::string> out;
  for (const Consumer& c : consumers)
    if (c.source == Source::Prometheus && std::find(out.begin(), out.end(), c.query) == out.end())
      out.push_back(c.query);
  return out;
}

std::int64_t weightedAverage(std::int64_t previous, std::int64_t sample) {
  // Go folds its constant 1-beta to exactly float64(0.1); 1.0 - 0.9 in doubles is a hair less,
  // which rounds 0.5 down.
  constexpr double kBeta = 0.9;
  constexpr double kOneMinusBeta = 0.1;
  return static_cast<std::int64_t>(
      std::round(kBeta * static_cast<double>(previous) + kOneMinusBeta * static_cast<double>(sample)));
}

}  // namespace kdesched::usage
