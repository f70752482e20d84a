#include "pkg/daemon/metrics_server_collector.h"

#include "pkg/base/log.h"
#include "pkg/usage/decode.h"

namespace kdesched::daemon {
namespace {

// Every page of one metrics.k8s.io LIST into `out`, through the client's paging and retries.
kube::ApiResult<kube::PagedList> listMetrics(kube::Client& client, std::string_view path, std::string_view name,
                                             usage::SourceReadings& out, api::JsonParser& parser,
                                             Cancellation* cancel) {
  kube::PageReader reader;
  reader.decode = [&](std::string& body, std::string& continueToken) {
    return usage::addMetricsList(body, out, &parser, &continueToken);
  };
  reader.restart = [&] {
    out.nodes.clear();
    out.pods = usage::PodUsageTable();
    out.podsTakenAt.reset();
    out.notes.clear();
  };
  return client.listPages(path, name, kube::ListOptions{}, reader, cancel);
}

std::optional<std::int64_t> folded(const std::optional<std::int64_t>& previous,
                                   const std::optional<std::int64_t>& sample) {
  if (!sample) return std::nullopt;  // unknown now: the plugin leaves the node out, never reads 0
  if (!previous) return sample;
  return usage::weightedAverage(*previous, *sample);
}

}  // namespace

std::string describeMetricsListError(std::string_view what, const kube::ApiError& e) {
  std::string out = std::string(what) + " failed: " + e.describe();
  // The aggregator's messages end with a space or a newline.
  out.erase(out.find_last_not_of(" \t\r\n") + 1);
  if (e.code == 401 || e.code == 403)
    out += " (kdesched's ServiceAccount needs list on nodes and pods in the metrics.k8s.io API group)";
  else if (e.code == 404 || e.code == 503)
    out += " (is metrics-server running, and its APIService v1beta1.metrics.k8s.io available?)";
  return out;
}

MetricsServerCollector::MetricsServerCollector(kube::Client& client, std::shared_ptr<Clock> clock,
                                               NodeExists nodeExists, SourceHealth& health)
    : client_(client), clock_(std::move(clock)), nodeExists_(std::move(nodeExists)), health_(health) {}

MetricsServerCollector::~MetricsServerCollector() { stop(); }

bool MetricsServerCollector::collect(Cancellation* cancel) {
  std::lock_guard<std::mutex> one(collectMu_);
  usage::SourceReadings sample;
  auto listed = listMetrics(client_, kNodeMetricsPath, "nodemetrics", sample, nodeParser_, cancel);
  if (!listed.isOk()) {
    if (listed.error().cancelled) return false;  // shutting down: not the source's fault
    const std::string why = describeMetricsListError("NodeMetrics list", listed.error());
    {
      std::lock_guard<std::mutex> lock(mu_);
      lastError_ = why;
    }
    health_.report("NodeMetrics list", why);
    return false;
  }
  bool first = false, noneYet = false;
  std::size_t nodes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::size_t taken = fold(sample);
    lastError_.reset();
    // A LIST with none of the cluster's nodes (metrics-server just started: no node scraped twice
    // yet) answers but measures nothing: not the first collection, so the bounded first wait goes
    // on and a one-shot run decides on numbers instead of skipping for want of them.
    if (!synced_ && taken == 0) {
      noneYet = !listedNone_;
      listedNone_ = true;
    } else {
      first = !synced_;
      synced_ = true;
    }
    nodes = averages_.size();
  }
  health_.report("NodeMetrics list", std::nullopt);
  if (noneYet)
    log::info("metrics collector: metrics-server lists none of the cluster's nodes yet; waiting for a sample",
              {{"origin", "metrics-server"}});
  if (first) log::info("metrics collector: first collection", {{"nodes", nodes}, {"origin", "metrics-server"}});
  return true;
}

// Under mu_. Nodes in the LIST the cluster does not have are not taken (upstream collects the
// nodes it lists); averages of nodes the cluster no longer has are dropped; a node missing from
// this LIST keeps its average and its old takenAt (upstream keeps the value, kdesched's plugin
// leaves the node out once the sample is stale). Returns how many nodes the LIST gave.
std::size_t MetricsServerCollector::fold(const usage::SourceReadings& sample) {
  std::size_t taken = 0;
  for (const auto& [name, s] : sample.nodes) {
    const std::string node = name.str();
    if (!nodeExists_(node)) continue;
    ++taken;
    auto [it, fresh] = averages_.try_emplace(node);
    Average& a = it->second;
    if (fresh) {
      a.cpuMilli = s.cpuMilli;
      a.memoryBytes = s.memoryBytes;
    } else {
      a.cpuMilli = folded(a.cpuMilli, s.cpuMilli);
      a.memoryBytes = folded(a.memoryBytes, s.memoryBytes);
    }
    a.takenAt = s.takenAt;
  }
  for (auto it = averages_.begin(); it != averages_.end();) {
    if (nodeExists_(it->first))
      ++it;
    else
      it = averages_.erase(it);
  }
  return taken;
}

void MetricsServerCollector::start(Cancellation& parent) {
  if (thread_.joinable()) return;
  parentStop_ = std::make_unique<CancelSubscription>(&parent, [this] { stop_.cancel(); });
  thread_ = std::thread([this] {
    log::debug("metrics collector started", {{"period_seconds", kPeriod.count()}});
    while (!stop_.cancelled()) {
      const Clock::TimePoint start = clock_->now();
      collect(&stop_);
      const Clock::Duration wait = start + kPeriod - clock_->now();
      if (wait > Clock::Duration::zero() && !clock_->sleepFor(wait, &stop_)) break;
    }
    log::debug("metrics collector stopped");
  });
}

void MetricsServerCollector::stop() {
  stop_.cancel();
  if (thread_.joinable()) thread_.join();
  parentStop_.reset();
}

bool MetricsServerCollector::synced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_;
}

bool MetricsServerCollector::waitForFirst(Clock::Duration bound, Cancellation& stop) {
  const Clock::TimePoint deadline = clock_->now() + bound;
  while (!synced()) {
    if (stop.cancelled() || clock_->now() >= deadline) return false;
    clock_->sleepFor(std::min<Clock::Duration>(std::chrono::seconds(1), deadline - clock_->now()), &stop);
  }
  return true;
}

usage::SourceReadings MetricsServerCollector::readings(bool pods, Cancellation* cancel) {
  usage::SourceReadings out;
  out.source = usage::Source::KubernetesMetrics;
  out.origin = "metrics-server";
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!synced_) {
      out.down = "no NodeMetrics collected yet";
      if (lastError_)
        *out.down += " (" + *lastError_ + ")";
      else if (listedNone_)
        *out.down += " (metrics-server lists none of the cluster's nodes yet)";
      return out;
    }
    if (lastError_) {
      out.down = *lastError_;
      return out;
    }
    out.nodes.reserve(averages_.size());
    for (const auto& [name, a] : averages_)
      out.nodes.emplace(api::Symbol(name), usage::NodeSample{a.cpuMilli, a.memoryBytes, std::nullopt, a.takenAt});
  }
  if (pods) {
    if (auto why = listPods(out, cancel)) {
      out.nodes.clear();
      out.down = *why;
    }
  }
  return out;
}

std::optional<std::string> MetricsServerCollector::listPods(usage::SourceReadings& out, Cancellation* cancel) {
  std::lock_guard<std::mutex> lock(podsMu_);
  usage::SourceReadings pods;
  auto listed = listMetrics(client_, kPodMetricsPath, "podmetrics", pods, podParser_, cancel);
  if (!listed.isOk()) {
    const std::string why = describeMetricsListError("PodMetrics list", listed.error());
    if (!listed.error().cancelled) health_.report("PodMetrics list", why);
    return why;
  }
  health_.report("PodMetrics list", std::nullopt);
  pods.pods.finish();
  out.pods = std::move(pods.pods);
  out.podsTakenAt = pods.podsTakenAt;
  out.notes = std::move(pods.notes);
  return std::nullopt;
}

}  // namespace kdesched::daemon
