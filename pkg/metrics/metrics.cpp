#include "pkg/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <iterator>
#include <sstream>
#include <type_traits>
#include <utility>

namespace kdesched::metrics {
namespace {

const prometheus::Histogram::BucketBoundaries kLoopBuckets = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,  2.5,
                                                              5,    10,    25,   50,  100,  250, 500};
const prometheus::Histogram::BucketBoundaries kStrategyBuckets = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                                  2.5,  5,     10,   25,  50,   100};
const prometheus::Histogram::BucketBoundaries kMoveBuckets = {1, 2, 5, 10, 20, 30, 60, 120, 300, 600};
const prometheus::Histogram::BucketBoundaries kReactionBuckets = {0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300};

}  // namespace

template <typename Builder>
auto* Metrics::add(Builder&& builder) {
  auto* family = &builder.Register(*registry_);
  touch_.push_back([family] {
    if constexpr (std::is_same_v<std::remove_pointer_t<decltype(family)>, prometheus::Family<prometheus::Histogram>>) {
      family->Add({}, prometheus::Histogram::BucketBoundaries{});
    } else {
      family->Add({});
    }
  });
  return family;
}

Metrics::Metrics(const std::string& version, const std::vector<StrategyId>& strategies, ProcSource process,
                 OwnerEvictionsConfig owners)
    : registry_(std::make_shared<prometheus::Registry>()),
      process_(std::make_shared<ProcessCollector>(std::move(process))) {
  evicted_ = add(prometheus::BuildCounter()
                     .Name("descheduler_pods_evicted_total")
                     .Help("Number of evicted pods, by the result, strategy, profile, namespace and node"));
  evictedDeprecated_ =
      add(prometheus::BuildCounter()
              .Name("descheduler_pods_evicted")
              .Help("[DEPRECATED since upstream 0.34.0, use descheduler_pods_evicted_total] Number of evicted pods"));
  owners_ = std::make_unique<OwnerEvictions>(
      *add(prometheus::BuildCounter()
               .Name("kdesched_owner_evictions_total")
               .Help("Pods evicted, by namespace, owning workload (a Deployment for its ReplicaSets' pods) and the "
                     "plugin that evicted them; idle series are removed, overflow beyond the cap in "
                     "owner_name=\"_overflow\"")),
      owners);
  loop_ = add(prometheus::BuildHistogram()
                  .Name("descheduler_loop_duration_seconds")
                  .Help("Time taken to complete a full descheduling cycle"));
  loopDeprecated_ = add(
      prometheus::BuildHistogram()
          .Name("descheduler_descheduler_loop_duration_seconds")
          .Help(
              "[DEPRECATED, use descheduler_loop_duration_seconds] Time taken to complete a full descheduling cycle"));
  strategy_ = add(prometheus::BuildHistogram()
                      .Name("descheduler_strategy_duration_seconds")
                      .Help("Time taken to complete each strategy of the descheduling operation"));
  strategyDeprecated_ =
      add(prometheus::BuildHistogram()
              .Name("descheduler_descheduler_strategy_duration_seconds")
              .Help("[DEPRECATED, use descheduler_strategy_duration_seconds] Time taken to complete each strategy"));
  add(prometheus::BuildGauge().Name("descheduler_build_info").Help("Build information; constant 1"))
      ->Add({{"AppVersion", version},
             {"DeschedulerVersion", "kdesched-" + version},
             {"GitBranch", ""},
             {"GitSha1", ""},
             {"GoVersion", ""}})
      .Set(1);
  refused_ =
      add(prometheus::BuildCounter()
              .Name("kdesched_evictions_refused_total")
              .Help("Pods a plugin chose that were not evicted, by reason (filter, preEvictionFilter, limit-*, pdb, "
                    "api, anti-flapping, shutdown, stale-cache, not-leader)"));
  watchRestarts_ =
      add(prometheus::BuildCounter()
              .Name("kdesched_watch_restarts_total")
              .Help("Watch streams re-opened, by resource and reason (closed, very_short, broken, open_failed, "
                    "error_event, silent)"));
  relists_ = add(prometheus::BuildCounter().Name("kdesched_relists_total").Help("Full relists, by resource"));
  cacheObjects_ = add(prometheus::BuildGauge().Name("kdesched_cache_objects").Help("Objects in the cache, by kind"));
  lastCycle_ = add(prometheus::BuildGauge()
                       .Name("kdesched_last_successful_cycle_timestamp_seconds")
                       .Help("Unix time at which the last descheduling cycle completed"));
  triggerEvents_ = add(prometheus::BuildCounter()
                           .Name("kdesched_trigger_events_total")
                           .Help("Store events that may have created a violation, by kind"));
  triggerRuns_ =
      add(prometheus::BuildCounter().Name("kdesched_trigger_runs_total").Help("Event-triggered scoped runs"));
  eventToEviction_ = add(prometheus::BuildHistogram()
                             .Name("kdesched_event_to_eviction_seconds")
                             .Help("Delay from the event that created a violation to the eviction request"));
  moves_ = add(prometheus::BuildCounter()
                   .Name("kdesched_moves_total")
                   .Help("Make-before-break moves (rollout restarts instead of evictions), by outcome: succeeded, "
                         "failed"));
  moveReady_ = add(prometheus::BuildHistogram()
                       .Name("kdesched_move_ready_seconds")
                       .Help("From a move's rollout restart to its new pod Ready"));
  pendingHelped_ = add(prometheus::BuildCounter()
                           .Name("kdesched_pending_helped_total")
                           .Help("MakeRoomForPendingPods tries (one run's evictions for one pending pod), by outcome: "
                                 "scheduled, scheduled_elsewhere, gone, still_pending"));
  suppressed_ = add(prometheus::BuildCounter()
                        .Name("kdesched_evictions_suppressed_total")
                        .Help("Evictions suppressed by anti-flapping (cooldown, rate limit, backoff)"));
  usageUp_ = add(prometheus::BuildGauge()
                     .Name("kdesched_usage_source_up")
                     .Help("1 when the usage source's last collection or query answered, 0 when it failed, by source"));
  budgetRemaining_ = add(prometheus::BuildGauge()
                             .Name("kdesched_budget_remaining")
                             .Help("Evictions an active disruption budget of the policy still allows, by budget"));
  usageLeftOut_ =
      add(prometheus::BuildGauge()
              .Name("kdesched_usage_nodes_left_out")
              .Help("Nodes of the last cycle left out of balancing by usage: sample missing, stale or not a number"));
  httpShed_ =
      add(prometheus::BuildCounter()
              .Name("kdesched_http_connections_shed_total")
              .Help("Metrics server connections closed at the connection limit, by which one gave way (waiting, "
                    "idle, new)"));
  httpRejected_ = add(prometheus::BuildCounter()
                          .Name("kdesched_http_rejections_total")
                          .Help("Metrics server requests refused or connections closed by a bound, by reason"));
  httpOpen_ =
      add(prometheus::BuildGauge().Name("kdesched_http_open_connections").Help("Open metrics server connections"));
  for (const char* victim : {"waiting", "idle", "new"}) httpShed_->Add({{"victim", victim}});
  httpOpen_->Add({});

  for (const auto& s : strategies) {
    for (const char* result : {"success", "error"}) {
      evicted_->Add(
          {{"result", result}, {"strategy", s.strategy}, {"profile", s.profile}, {"namespace", ""}, {"node", ""}});
    }
    strategy_->Add({{"strategy", s.strategy}, {"profile", s.profile}}, kStrategyBuckets);
  }
  loop_->Add({}, kLoopBuckets);
  loopDeprecated_->Add({}, kLoopBuckets);
}

void Metrics::podEvicted(const std::string& result, const std::string& strategy, const std::string& profile,
                         const std::string& ns, const std::string& node) {
  prometheus::Labels l{
      {"result", result}, {"strategy", strategy}, {"profile", profile}, {"namespace", ns}, {"node", node}};
  std::lock_guard<std::mutex> lock(nodesMu_);
  auto& total = evicted_->Add(l);
  auto& deprecated = evictedDeprecated_->Add(l);
  total.Increment();
  deprecated.Increment();
  if (node.empty()) return;
  NodeSeries& series = nodeSeries_[node];
  const std::pair<prometheus::Counter*, prometheus::Counter*> pair{&total, &deprecated};
  if (std::find(series.counters.begin(), series.counters.end(), pair) == series.counters.end())
    series.counters.push_back(pair);
}

void Metrics::forgetDepartedNodes(const std::function<bool(const std::string&)>& present,
                                  std::chrono::steady_clock::time_point now, std::chrono::nanoseconds grace) {
  std::lock_guard<std::mutex> lock(nodesMu_);
  for (auto it = nodeSeries_.begin(); it != nodeSeries_.end();) {
    NodeSeries& series = it->second;
    if (present(it->first)) {
      series.absentSince.reset();
    } else if (!series.absentSince) {
      series.absentSince = now;
    } else if (now - *series.absentSince >= grace) {
      for (auto [total, deprecated] : series.counters) {
        evicted_->Remove(total);
        evictedDeprecated_->Remove(deprecated);
      }
      it = nodeSeries_.erase(it);
      continue;
    }
    ++it;
  }
}

void Metrics::ownerEvicted(const std::string& ns, const Workload& owner, const std::string& strategy,
                           std::chrono::steady_clock::time_point now) {
  owners_->evicted(ns, owner, strategy, now);
}

void Metrics::forgetIdleOwners(std::chrono::steady_clock::time_point now) { owners_->forgetIdle(now); }

void Metrics::evictionRefused(const std::string& reason, const std::string& strategy, const std::string& profile) {
  refused_->Add({{"reason", reason}, {"strategy", strategy}, {"profile", profile}}).Increment();
}

void Metrics::loopDuration(double seconds) {
  loop_->Add({}, kLoopBuckets).Observe(seconds);
  loopDeprecated_->Add({}, kLoopBuckets).Observe(seconds);
}

void Metrics::strategyDuration(const std::string& strategy, const std::string& profile, double seconds) {
  strategy_->Add({{"strategy", strategy}, {"profile", profile}}, kStrategyBuckets).Observe(seconds);
  strategyDeprecated_->Add({{"strategy", strategy}, {"profile", profile}}, kStrategyBuckets).Observe(seconds);
}

void Metrics::cycleSucceeded(double unixSeconds) { lastCycle_->Add({}).Set(unixSeconds); }
void Metrics::watchRestarted(const std::string& resource, const std::string& reason) {
  watchRestarts_->Add({{"resource", resource}, {"reason", reason}}).Increment();
}
void Metrics::relisted(const std::string& resource) { relists_->Add({{"resource", resource}}).Increment(); }
void Metrics::cacheObjects(const std::string& kind, double count) { cacheObjects_->Add({{"kind", kind}}).Set(count); }
void Metrics::triggerEvent(const std::string& kind) { triggerEvents_->Add({{"kind", kind}}).Increment(); }
void Metrics::triggerRun() { triggerRuns_->Add({}).Increment(); }
void Metrics::eventToEviction(double seconds) { eventToEviction_->Add({}, kReactionBuckets).Observe(seconds); }
void Metrics::moveFinished(bool succeeded, double readySeconds) {
  moves_->Add({{"result", succeeded ? "succeeded" : "failed"}}).Increment();
  if (readySeconds >= 0) moveReady_->Add({}, kMoveBuckets).Observe(readySeconds);
}
void Metrics::pendingHelped(const std::string& result) { pendingHelped_->Add({{"result", result}}).Increment(); }
void Metrics::evictionSuppressed(const std::string& reason) { suppressed_->Add({{"reason", reason}}).Increment(); }

void Metrics::usageSourceUp(const std::string& source, bool up) { usageUp_->Add({{"source", source}}).Set(up ? 1 : 0); }
void Metrics::usageNodesLeftOut(const std::string& source, double nodes) {
  usageLeftOut_->Add({{"source", source}}).Set(nodes);
}

void Metrics::budgetRemaining(const std::string& budget, std::optional<double> remaining) {
  prometheus::Gauge& g = budgetRemaining_->Add({{"budget", budget}});
  if (remaining)
    g.Set(*remaining);
  else
    budgetRemaining_->Remove(&g);
}

void Metrics::httpConnectionShed(const std::string& victim) { httpShed_->Add({{"victim", victim}}).Increment(); }
void Metrics::httpRejected(const std::string& reason) { httpRejected_->Add({{"reason", reason}}).Increment(); }
void Metrics::httpOpenConnections(double open) { httpOpen_->Add({}).Set(open); }

void Metrics::cacheStaleSource(StaleSource source) {
  std::lock_guard<std::mutex> lock(staleMu_);
  stale_ = std::move(source);
}

std::string Metrics::catalogue(const std::string& version) {
  Metrics m(version, {});
  for (const auto& touch : m.touch_) touch();
  m.cacheStaleSource([] { return std::vector<std::pair<std::string, bool>>{{"pods", false}}; });
  std::istringstream exposition(m.serialize());
  std::string out, line;
  while (std::getline(exposition, line))
    if (line.rfind("# ", 0) == 0) out += line + "\n";
  return out;
}

std::string Metrics::serialize() const {
  std::ostringstream out;
  auto families = registry_->Collect();
  auto processFamilies = process_->Collect();
  families.insert(families.end(), std::make_move_iterator(processFamilies.begin()),
                  std::make_move_iterator(processFamilies.end()));
  StaleSource stale;
  {
    std::lock_guard<std::mutex> lock(staleMu_);
    stale = stale_;
  }
  if (stale) {
    prometheus::MetricFamily f;
    f.name = "kdesched_cache_stale";
    f.help =
        "1 while a resource's cache cannot be trusted (its LIST or WATCH refused, or failing too long), by resource";
    f.type = prometheus::MetricType::Gauge;
    for (const auto& [resource, isStale] : stale()) {
      prometheus::ClientMetric m;
      m.label.push_back({"resource", resource});
      m.gauge.value = isStale ? 1 : 0;
      f.metric.push_back(std::move(m));
    }
    families.push_back(std::move(f));
  }
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace kdesched::metrics
