#include "pkg/daemon/daemon.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <malloc.h>
#include <pthread.h>
#include <csignal>
#include <ctime>
#include <utility>

#include "pkg/daemon/cycle_gate.h"
#include "pkg/daemon/kube_eviction_api.h"
#include "pkg/evictor/pipelined_sink.h"
#include "pkg/kube/cpprest_transport.h"
#include "pkg/kube/reflector.h"
#include "pkg/metrics/server.h"
#include "pkg/plan/engine.h"
#include "pkg/trigger/antiflapping.h"
#include "pkg/trigger/config.h"
#include "pkg/trigger/planner.h"

namespace kdesched::daemon {
namespace {

std::string kindLabel(api::Kind k) { return std::string(api::toString(k)); }

// Eviction outcomes → upstream's metric families (+ refusal reasons).
class MetricsSink : public evictor::Sink {
 public:
  explicit MetricsSink(metrics::Metrics& m) : m_(m) {}
  framework::EvictResult evict(const evictor::Decision& d) override {
    m_.podEvicted("success", d.plugin, d.profile, d.pod->ns.str(), d.node);
    return framework::EvictResult::success();
  }
  void refused(const evictor::RefusedDecision& r) override {
    const auto& d = r.wanted;
    std::string kind(framework::toString(r.result.refusal));
    m_.evictionRefused(kind, d.plugin, d.profile);
    // Upstream counts API failures and limit hits under descheduler_pods_evicted_total too.
    if (r.result.refusal == framework::Refusal::ApiError || r.result.refusal == framework::Refusal::Pdb)
      m_.podEvicted("error", d.plugin, d.profile, d.pod->ns.str(), d.node);
    else if (const char* limit = limitResult(r.result.refusal))
      m_.podEvicted(limit, d.plugin, d.profile, d.pod->ns.str(), d.node);
  }

  // Upstream's result label for a limit hit: its error's fixed text (the refusal's detail carries
  // counts and node names, which would make a label value per node and limit).
  static const char* limitResult(framework::Refusal r) {
    switch (r) {
      case framework::Refusal::TotalLimit: return "maximum number of evicted pods per a descheduling cycle reached";
      case framework::Refusal::NodeLimit: return "maximum number of evicted pods per node reached";
      case framework::Refusal::NamespaceLimit: return "maximum number of evicted pods per namespace reached";
      default: return nullptr;
    }
  }

 private:
  metrics::Metrics& m_;
};

// Counts watch restarts and relists, and tracks which caches are being relisted (CacheHealth).
class ReflectorMetrics : public kube::ReflectorObserver {
 public:
  ReflectorMetrics(metrics::Metrics* m, CacheHealth& health) : m_(m), health_(health) {}
  void onList(api::Kind k, std::size_t, double) override { health_.listed(k); }
  void onWatchRestart(api::Kind k, const std::string& reason) override {
    if (m_) m_->watchRestarted(kindLabel(k));
    (void)reason;
  }
  void onRelist(api::Kind k, const std::string& reason) override {
    health_.relistRequested(k);
    if (m_) m_->relisted(kindLabel(k));
    (void)reason;
  }

 private:
  metrics::Metrics* m_;
  CacheHealth& health_;
};

// Counts evictions the API server refused for reasons that will not go away by themselves
// (forbidden, server errors, unreachable): a one-shot run that hit any exits non-zero, so a
// CronJob whose ServiceAccount cannot evict shows up as failing instead of quietly succeeding.
class HardFailures : public evictor::Sink {
 public:
  framework::EvictResult evict(const evictor::Decision&) override { return framework::EvictResult::success(); }
  void refused(const evictor::RefusedDecision& r) override {
    if (r.result.refusal != framework::Refusal::ApiError) return;
    const std::string& by = r.result.by;
    if (by == "api: not found" || by == "api: conflict" || by == "api: throttled") return;
    if (by.rfind("api: ", 0) != 0) return;
    ++count_;
  }
  std::size_t count() const { return count_; }

 private:
  std::size_t count_ = 0;
};

// Candidates the owner cooldown refused: the violation stays, but no new event may come to
// re-trigger it, so they are looked at again when the cooldown ends.
class CooldownRefusals : public evictor::Sink {
 public:
  framework::EvictResult evict(const evictor::Decision&) override { return framework::EvictResult::success(); }
  void refused(const evictor::RefusedDecision& r) override {
    if (r.result.refusal == framework::Refusal::AntiFlapping && r.result.by == "anti-flapping: cooldown")
      pending_.emplace_back(r.wanted.pod->key(), r.wanted.plugin);
  }
  std::vector<std::pair<std::string, std::string>> take() { return std::exchange(pending_, {}); }

 private:
  std::vector<std::pair<std::string, std::string>> pending_;
};

// A run's evicted/refused counts once the pipelined evictions have their answers: the chain counted
// each submission as evicted; the ones the server refused afterwards move to refused.
std::pair<std::size_t, std::size_t> settledCounts(const evictor::EvictionChain& chain,
                                                  const evictor::FlushResult& late) {
  const std::size_t failed = std::min(late.failed, chain.evictedThisCycle());
  return {chain.evictedThisCycle() - failed, chain.refusedThisCycle() + failed};
}

class StrategyTimer : public framework::CycleObserver {
 public:
  explicit StrategyTimer(metrics::Metrics* m) : m_(m) {}
  void pluginFinished(const std::string& profile, const std::string& plugin, double seconds, const Status&) override {
    if (m_) m_->strategyDuration(plugin, profile, seconds);
  }

 private:
  metrics::Metrics* m_;
};

// The cycle's own gate, then the cross-cycle ones (anti-flapping): every gate must admit.
class GateChain : public evictor::EvictionGate {
 public:
  GateChain(evictor::EvictionGate& first, evictor::EvictionGate* second) : first_(first), second_(second) {}
  framework::EvictResult admit(const evictor::Decision& d) override {
    framework::EvictResult r = first_.admit(d);
    if (r.refusal != framework::Refusal::None || !second_) return r;
    return second_->admit(d);
  }
  void evicted(const evictor::Decision& d) override {
    first_.evicted(d);
    if (second_) second_->evicted(d);
  }

 private:
  evictor::EvictionGate& first_;
  evictor::EvictionGate* second_;
};

double monotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Cancellation& shutdown() {
  static Cancellation c;
  return c;
}

void startSignalThread() {
  std::thread([] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    if (sigwait(&set, &sig) == 0) {
      spdlog::info("msg=\"shutting down\" signal={}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      shutdown().cancel();
    }
  }).detach();
}

double unixNow() { return static_cast<double>(std::time(nullptr)); }

}  // namespace

void blockTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int run(const Options& o) {
  startSignalThread();
  Cancellation& stop = shutdown();

  auto config = kube::resolveConfig(o.kubeconfig);
  if (!config.isOk()) {
    spdlog::error("msg=\"no usable client configuration\" error=\"{}\"", config.error());
    return kExitBadInput;
  }
  if (o.qps > 0) config->qps = o.qps;
  if (o.burst > 0) config->burst = o.burst;
  auto transport = kube::makeCpprestTransport(*config);
  if (!transport.isOk()) {
    spdlog::error("msg=\"cannot set up the API client\" error=\"{}\"", transport.error());
    return kExitBadInput;
  }
  auto clock = systemClock();
  kube::Client client(*config, std::move(transport.value()), clock);

  framework::BuildContext ctx;
  ctx.now = [] { return static_cast<api::Timestamp>(std::time(nullptr)); };
  ctx.priorityClassValue = [&client](const std::string& name) -> Result<std::int32_t> {
    auto r = client.get("/apis/scheduling.k8s.io/v1/priorityclasses/" + name);
    if (!r) return Status::error("cannot read PriorityClass \"" + name + "\": " + r.error().describe());
    try {
      return nlohmann::json::parse(r->body).at("value").get<std::int32_t>();
    } catch (const std::exception& e) {
      return Status::error("PriorityClass \"" + name + "\" has no readable value: " + e.what());
    }
  };
  auto engine = plan::buildEngine(o.policyPath, ctx);
  if (!engine.isOk()) {
    spdlog::error("msg=\"bad policy\" error=\"{}\"", engine.error());
    return kExitBadInput;
  }
  auto extension = trigger::decodeExtension(engine->policy.extension);
  if (!extension.isOk()) {
    spdlog::error("msg=\"bad policy\" error=\"{}: {}\"", engine->policy.sourceName, extension.error());
    return kExitBadInput;
  }

  std::unique_ptr<metrics::Metrics> metrics;
  if (!o.disableMetrics) {
    std::vector<metrics::StrategyId> ids;
    for (const auto& p : engine->profiles)
      for (const auto& s : p.strategyNames()) ids.push_back({s, p.name});
    metrics = std::make_unique<metrics::Metrics>(KDESCHED_VERSION, ids);
  }

  cluster::Store store;
  CacheHealth cacheHealth;
  ReflectorMetrics reflectorMetrics(metrics.get(), cacheHealth);
  std::vector<std::unique_ptr<kube::Reflector>> reflectors;
  for (const kube::Resource& r :
       {kube::kPods, kube::kNodes, kube::kNamespaces, kube::kPodDisruptionBudgets, kube::kPersistentVolumeClaims}) {
    kube::ReflectorOptions ro;
    ro.clock = clock;
    reflectors.push_back(std::make_unique<kube::Reflector>(client, r, store, ro, &reflectorMetrics));
  }
  auto allSynced = [&] {
    for (const auto& r : reflectors)
      if (!r->synced()) return false;
    return true;
  };

  std::unique_ptr<kube::LeaderElector> elector;
  if (o.leaderElect) elector = std::make_unique<kube::LeaderElector>(client, o.leader, clock);
  std::atomic<bool> standby{o.leaderElect};

  metrics::Server server(metrics.get(), [&]() -> metrics::Readiness {
    if (!allSynced()) return {false, "caches not synced"};
    if (elector) return {true, elector->isLeader() ? "leader" : "standby"};
    return {true, "ok"};
  });
  if (o.port != 0) {
    Status st = server.start(o.bindAddress, o.port);
    if (!st.isOk()) {
      spdlog::error("msg=\"cannot start the metrics server\" error=\"{}\"", st.message());
      return kExitBadInput;
    }
  }

  for (auto& r : reflectors) r->start();
  auto stopAll = [&] {
    for (auto& r : reflectors) r->stop();
    server.stop();
  };

  auto syncDeadline =
      clock->now() + std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(o.syncTimeoutSeconds));
  while (!allSynced()) {
    if (stop.cancelled()) {
      stopAll();
      spdlog::info("msg=\"stopped\" exit={}", kExitOk);
      return kExitOk;
    }
    if (clock->now() > syncDeadline) {
      spdlog::error(
          "msg=\"the cache did not sync\" timeout_seconds={} hint=\"check the API server address, credentials and RBAC "
          "(get/list/watch pods, nodes, namespaces, poddisruptionbudgets, persistentvolumeclaims)\"",
          o.syncTimeoutSeconds);
      stopAll();
      return kExitFailure;
    }
    stop.waitFor(std::chrono::milliseconds(50));
  }
  spdlog::info("msg=\"caches synced\" pods={} nodes={} pdbs={}", store.count(api::Kind::Pod),
               store.count(api::Kind::Node), store.count(api::Kind::PodDisruptionBudget));
  // The LIST pages and their decoding buffers are freed now; give those pages back to the system
  // rather than keep them as the process's high-water mark.
  malloc_trim(0);

  std::atomic<bool> lost{false};
  if (elector) {
    if (!elector->acquire(stop)) {
      stopAll();
      spdlog::info("msg=\"stopped\" exit={}", kExitOk);
      return kExitOk;
    }
    standby = false;
    elector->startRenewing([&] {
      lost = true;
      stop.cancel();
    });
  }

  // Cancelled by SIGTERM: an eviction or Event request in flight against a hung API server must
  // not hold the shutdown for the HTTP client's timeout.
  KubeEvictionApi evictionApi(client, &stop);
  evictor::ApiSink apiSink(evictionApi, {engine->policy.gracePeriodSeconds,
                                         engine->policy.evictionFailureEventNotification.value_or(false)});
  evictor::DryRunSink dryRunSink;
  evictor::Sink& primary = o.dryRun ? static_cast<evictor::Sink&>(dryRunSink) : apiSink;
  std::unique_ptr<MetricsSink> metricsSink;
  std::vector<evictor::Sink*> observers;
  if (metrics) {
    metricsSink = std::make_unique<MetricsSink>(*metrics);
    observers.push_back(metricsSink.get());
  }
  HardFailures hardFailures;
  observers.push_back(&hardFailures);
  CooldownRefusals cooldownRefusals;
  observers.push_back(&cooldownRefusals);
  RecentEvictions recentEvictions;
  RecentEvictions* recent = o.dryRun ? nullptr : &recentEvictions;  // a dry run deletes nothing
  // A pipelined eviction the server refused was remembered as evicted when it was submitted: forget
  // it, so a later run may try the pod again.
  evictor::PipelinedSink sink(primary, observers, o.dryRun ? 1 : static_cast<std::size_t>(o.evictionConcurrency),
                              [&](const evictor::Decision& d, const framework::EvictResult&) {
                                if (recent) recent->forget(d.pod->uid);
                              });
  StrategyTimer timer(metrics.get());
  const auto resyncTimeout =
      std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(o.syncTimeoutSeconds));
  std::function<bool()> isLeader;
  if (elector) isLeader = [&elector] { return elector->isLeader(); };

  // Anti-flapping only where cycles repeat: a one-shot run has no history to learn from.
  std::unique_ptr<trigger::AntiFlapping> antiFlapping;
  if (o.intervalSeconds > 0) {
    antiFlapping = std::make_unique<trigger::AntiFlapping>(
        extension->antiFlapping, monotonicSeconds,
        [&](const trigger::AntiFlapping::PodRef& pod, int flaps, double backoff) {
          if (metrics) metrics->evictionSuppressed("gave-up");
          evictionApi.recordEvent({pod.ns, pod.name, pod.uid, "Warning", "DeschedulingGaveUp", "Descheduled",
                                   "kdesched evicted pods of this workload " + std::to_string(flaps) +
                                       " times and the same situation came back; backing off for " +
                                       std::to_string(static_cast<long long>(backoff)) + "s"});
        },
        [&](const std::string& reason) {
          if (metrics) metrics->evictionSuppressed(reason);
        });
  }
  std::mutex cycleMutex;  // periodic cycles and triggered runs never overlap

  std::unique_ptr<trigger::Planner> planner;
  // Called with cycleMutex held, after every run.
  auto requeueCooldownRefusals = [&] {
    auto pending = cooldownRefusals.take();
    if (!planner) return;
    for (const auto& [pod, plugin] : pending)
      planner->retryLater(pod, {plugin}, extension->antiFlapping.ownerCooldownSeconds + 0.1);
  };
  if (o.intervalSeconds > 0 && extension->triggers.enabled) {
    planner = std::make_unique<trigger::Planner>(
        store, extension->triggers,
        [&](const framework::CycleScope& scope, trigger::Planner::TimePoint firstEvent) {
          std::lock_guard<std::mutex> lock(cycleMutex);
          if (stop.cancelled() || (elector && !elector->isLeader()) || !cacheHealth.relisting().empty()) return;
          const std::uint64_t relists = cacheHealth.relistRequests();
          cluster::SnapshotPtr snapshot = store.snapshot();
          CycleGate cycleGate(stop, cacheHealth, relists, isLeader, recent);
          GateChain gates(cycleGate, antiFlapping.get());
          evictor::EvictionChain chain(engine->limits(), sink, &gates);
          framework::CycleResult cycle = engine->runCycle(*snapshot, chain, &timer, scope);
          const evictor::FlushResult flushed = sink.flush();
          requeueCooldownRefusals();
          double delay = std::chrono::duration<double>(std::chrono::steady_clock::now() - firstEvent).count();
          const auto [evicted, refused] = settledCounts(chain, flushed);
          spdlog::info(
              "msg=\"triggered run finished\" evicted={} refused={} candidates={} balance={} seconds={:.3f} "
              "event_to_decision_seconds={:.3f}",
              evicted, refused, scope.pods ? scope.pods->size() : 0, scope.runBalance, cycle.seconds, delay);
          if (metrics) {
            metrics->triggerRun();
            for (std::size_t i = 0; i < evicted; ++i) metrics->eventToEviction(delay);
          }
        },
        [&](const std::string& kind) {
          if (metrics) metrics->triggerEvent(kind);
        },
        antiFlapping.get());
    planner->start();
    spdlog::info(
        "msg=\"event triggers on\" debounce_seconds={} quiet_seconds={} balance_debounce_seconds={} "
        "rollout_grace_seconds={}",
        extension->triggers.debounceSeconds, extension->triggers.quietSeconds,
        extension->triggers.balanceDebounceSeconds, extension->triggers.rolloutGraceSeconds);
  }

  int exitCode = kExitOk;
  while (!stop.cancelled()) {
    auto start = clock->now();
    if (elector && !elector->isLeader()) {
      lost = true;
      break;
    }
    // A cache that lost its watch history (410 Gone) is out of sync until its relist completes:
    // wait for it (as for the first sync) rather than decide from what it still holds.
    if (std::string pending = cacheHealth.relisting(); !pending.empty()) {
      spdlog::info("msg=\"waiting for the cache to relist before the cycle\" resources=\"{}\"", pending);
      auto deadline = clock->now() + resyncTimeout;
      while (!cacheHealth.relisting().empty() && !stop.cancelled() && clock->now() < deadline)
        stop.waitFor(std::chrono::milliseconds(50));
      if (stop.cancelled()) break;
      if (pending = cacheHealth.relisting(); !pending.empty()) {
        spdlog::error("msg=\"the cache did not re-sync; cycle skipped\" resources=\"{}\" timeout_seconds={}", pending,
                      o.syncTimeoutSeconds);
        if (o.intervalSeconds <= 0) {
          exitCode = kExitFailure;
          break;
        }
        auto next =
            start + std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(o.intervalSeconds));
        auto wait = next - clock->now();
        if (wait > Clock::Duration::zero() && stop.waitFor(wait)) break;
        continue;
      }
      spdlog::info("msg=\"cache relisted\"");
      // The interval counts from the cycle's real start: a cycle right after this one could still
      // see the pods it evicts (their deletion not yet watched) and evict them again (404).
      start = clock->now();
    }
    const std::uint64_t relists = cacheHealth.relistRequests();
    if (!cacheHealth.relisting().empty()) continue;  // began just now: wait for it at the top
    std::unique_lock<std::mutex> cycleLock(cycleMutex);
    cluster::SnapshotPtr snapshot = store.snapshot();
    CycleGate cycleGate(stop, cacheHealth, relists, isLeader, recent);
    GateChain gates(cycleGate, antiFlapping.get());
    evictor::EvictionChain chain(engine->limits(), sink, &gates);
    const auto cycleStart = std::chrono::steady_clock::now();
    framework::CycleResult cycle = engine->runCycle(*snapshot, chain, &timer);
    const evictor::FlushResult flushed = sink.flush();
    // With evictions in flight after the strategies return, the cycle lasts until their answers.
    cycle.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - cycleStart).count();
    requeueCooldownRefusals();
    cycleLock.unlock();
    const auto [evicted, refused] = settledCounts(chain, flushed);
    spdlog::info("msg=\"cycle finished\" evicted={} refused={} nodes={} pods={} seconds={:.3f}{}", evicted, refused,
                 cycle.nodes, snapshot->podCount(), cycle.seconds,
                 cycle.skipped ? " skipped=\"" + cycle.skipReason + "\"" : std::string());
    if (metrics) {
      metrics->loopDuration(cycle.seconds);
      metrics->cycleSucceeded(unixNow());
      for (api::Kind k : {api::Kind::Pod, api::Kind::Node, api::Kind::Namespace, api::Kind::PodDisruptionBudget,
                          api::Kind::PersistentVolumeClaim})
        metrics->cacheObjects(kindLabel(k), static_cast<double>(store.count(k)));
    }
    if (o.intervalSeconds <= 0) break;
    // Non-sliding: the period is measured from each cycle's start.
    auto next = start + std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(o.intervalSeconds));
    auto wait = next - clock->now();
    if (wait > Clock::Duration::zero() && stop.waitFor(wait)) break;
  }

  if (planner) planner->stop();
  // Not after SIGTERM: a request cut short by the shutdown is not the server refusing.
  if (o.intervalSeconds <= 0 && exitCode == kExitOk && hardFailures.count() > 0 && !stop.cancelled()) {
    spdlog::error(
        "msg=\"evictions failed\" count={} hint=\"see the eviction failed lines above: forbidden (RBAC) or API server "
        "errors\"",
        hardFailures.count());
    exitCode = kExitFailure;
  }
  if (lost) {
    spdlog::error("msg=\"leadership lost; exiting so the replica restarts clean\"");
    exitCode = kExitFailure;
  }
  if (elector) elector->release();
  stopAll();
  spdlog::info("msg=\"stopped\" exit={}", exitCode);
  return exitCode;
}

}  // namespace kdesched::daemon
