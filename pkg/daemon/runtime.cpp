#include "pkg/daemon/runtime.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "pkg/api/decode.h"
#include "pkg/base/log.h"
#include "pkg/kube/cpprest_transport.h"

namespace kdesched::daemon {
namespace {

// How often the waits below look at the caches again.
constexpr std::chrono::milliseconds kSyncPoll{50};
constexpr std::chrono::seconds kEventDrainLimit{10};

}  // namespace

Result<FetchedPriorityClass> getPriorityClass(kube::Client& client, const std::string& name) {
  auto r = client.get("/apis/scheduling.k8s.io/v1/priorityclasses/" + name);
  if (!r) return Status::error("cannot read PriorityClass \"" + name + "\": " + r.error().describe());
  auto object = api::decodeObjectJson(r->body);
  const api::PriorityClass* pc = object.isOk() ? std::get_if<api::PriorityClass>(&object.value()) : nullptr;
  if (!pc)
    return Status::error("PriorityClass \"" + name + "\" has no readable value: " +
                         (object.isOk() ? std::string("the answer is not a PriorityClass") : object.error()));
  return FetchedPriorityClass{*pc, std::move(r->body)};
}

Result<std::int32_t> readPriorityClass(kube::Client& client, const std::string& name) {
  auto pc = getPriorityClass(client, name);
  if (!pc.isOk()) return pc.status();
  return pc->object.value;
}

metrics::Readiness readinessOf(bool synced, const std::string& stale, const evictor::Leadership* leader) {
  if (!synced) return {false, stale.empty() ? "caches not synced" : "caches not synced: " + stale};
  if (!stale.empty()) return {false, "cache stale: " + stale};
  if (leader) return {true, leader->isLeader() ? "leader" : "standby"};
  return {true, "ok"};
}

std::unique_ptr<Runtime> Runtime::create(const Options& options, std::shared_ptr<Clock> clock, Cancellation& stop) {
  std::unique_ptr<Runtime> rt(new Runtime(options, std::move(clock), stop));
  if (!rt->connect() || !rt->loadPolicy()) return nullptr;
  rt->buildMetrics();
  rt->buildCache();
  if (!rt->buildUsage()) return nullptr;
  if (options.leaderElect)
    rt->elector_ = std::make_unique<kube::LeaderElector>(*rt->client_, options.leader, rt->clock_);
  if (!rt->serve()) return nullptr;
  // Cancelled by SIGTERM: an eviction or Event request in flight against a hung API server must
  // not hold the shutdown for the HTTP client's timeout.
  rt->evictionApi_ = std::make_unique<kube::KubeEvictionApi>(*rt->client_, rt->clock_, &stop);
  rt->events_ = std::make_unique<evictor::AsyncEvents>(*rt->evictionApi_, rt->clock_, &stop);
  return rt;
}

Runtime::~Runtime() { stopAll(); }

bool Runtime::stopAll() {
  if (usage_) usage_->stop();
  for (auto& r : reflectors_) r->stop();
  return !server_ || server_->stop();
}

Result<std::unique_ptr<kube::Client>> makeClient(kube::ClientConfig config, double qps, int burst,
                                                 double requestTimeoutSeconds, std::shared_ptr<Clock> clock) {
  if (qps > 0) config.qps = qps;
  if (burst > 0) config.burst = burst;
  config.requestTimeout = std::chrono::milliseconds(static_cast<std::int64_t>(requestTimeoutSeconds * 1000));
  const kube::ProxyEnvironment env = kube::ProxyEnvironment::fromProcess();
  auto transport = kube::makeCpprestTransport(config, env);
  if (!transport.isOk()) return transport.status();
  // Which way the requests go, said once: a proxy picked up (or not) from the environment is the
  // first thing to know when the API server cannot be reached.
  if (auto proxy = kube::chooseProxy(config.server, config.proxyUrl, env); proxy.isOk()) {
    log::info("API server", {{"server", config.server},
                             {"proxy", proxy->describe()},
                             {"tls-server-name", config.tlsServerName.empty() ? "-" : config.tlsServerName}});
  }
  return std::make_unique<kube::Client>(std::move(config), std::move(transport.value()), std::move(clock));
}

bool Runtime::connect() {
  auto config = kube::resolveConfig(options_.kubeconfig);
  if (!config.isOk()) {
    log::error("no usable client configuration", {{"error", config.error()}});
    return false;
  }
  config->protobuf = options_.protobuf;
  auto client = makeClient(std::move(*config), options_.qps, options_.burst, options_.requestTimeoutSeconds, clock_);
  if (!client.isOk()) {
    log::error("cannot set up the API client", {{"error", client.error()}});
    return false;
  }
  client_ = std::move(client.value());
  return true;
}

bool Runtime::loadPolicy() {
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds(clock_);
  ctx.priorityClassValue = [client = client_.get()](const std::string& name) {
    return readPriorityClass(*client, name);
  };
  // A MakeRoomForPendingPods try's outcome: counted, and an Event on the pending pod (set up after
  // the policy: both are there before the first run).
  ctx.pendingOutcome = [this](const framework::PendingOutcome& o) {
    if (metrics_) metrics_->pendingHelped(o.result);
    if (!events_ || options_.dryRun) return;
    const bool placed = o.result == "scheduled" || o.result == "scheduled_elsewhere";
    events_->recordEvent({.ns = o.ns,
                          .podName = o.name,
                          .podUid = o.uid,
                          .type = placed ? "Normal" : "Warning",
                          .reason = placed ? "PendingPodHelped" : "PendingPodNotHelped",
                          .action = "MakingRoom",
                          .note = o.note,
                          .background = true});
  };
  auto engine = engine::buildEngine(options_.policyPath, ctx);
  if (!engine.isOk()) {
    log::error("bad policy", {{"error", engine.error()}});
    return false;
  }
  engine_ = std::move(engine.value());
  for (const std::string& w : engine_.policy.warnings) log::warn("policy warning", {{"detail", w}});
  return true;
}

void Runtime::buildMetrics() {
  if (options_.disableMetrics) return;
  std::vector<metrics::StrategyId> ids;
  for (const auto& p : engine_.profiles)
    for (const auto& s : p.strategyNames()) ids.push_back({s, p.name});
  metrics_ = std::make_unique<metrics::Metrics>(
      KDESCHED_VERSION, ids, metrics::ProcSource::system(),
      metrics::OwnerEvictionsConfig{.idle = seconds(options_.ownerEvictionsIdleSeconds),
                                    .maxSeries = static_cast<std::size_t>(options_.ownerEvictionsMaxSeries)});
  watchMetrics_ = std::make_unique<metrics::WatchMetrics>(*metrics_);
  metrics_->cacheStaleSource([&health = health_] {
    const std::vector<kube::StaleResource> stale = health.staleResources();
    std::vector<std::pair<std::string, bool>> out;
    for (const kube::Resource& r : kube::kCachedResources)
      out.emplace_back(r.name, std::any_of(stale.begin(), stale.end(),
                                           [&](const kube::StaleResource& s) { return s.resource == r.name; }));
    return out;
  });
}

void Runtime::buildCache() {
  // What the cache keeps follows what the policy's plugins read (the policy is fixed for the
  // process's life).
  store_.keepPodConditions(engine_.readsPodConditions());
  reflectorObservers_ = std::make_unique<kube::ReflectorObservers>(
      std::vector<kube::ReflectorObserver*>{&health_, watchMetrics_.get(), &syncWaker_});
  for (const kube::Resource& r : kube::kCachedResources) {
    kube::ReflectorOptions ro;
    ro.clock = clock_;
    ro.listOnly = options_.intervalSeconds <= 0;
    ro.watchList = options_.watchList;
    ro.silentWatch = std::chrono::seconds(static_cast<std::int64_t>(std::ceil(options_.watchSilenceSeconds)));
    reflectors_.push_back(std::make_unique<kube::Reflector>(*client_, r, store_, ro, reflectorObservers_.get()));
  }
}

bool Runtime::buildUsage() {
  PrometheusEnvironment env;
  // In a pod: Prometheus gets the service-account token and the cluster's CA, as upstream's does.
  if (auto inCluster = kube::loadInClusterConfig(); inCluster.isOk()) env.inCluster = std::move(*inCluster);
  env.timeout = seconds(options_.requestTimeoutSeconds > 0 ? options_.requestTimeoutSeconds : 30);
  env.plainHttpToken = options_.prometheusPlainHttpToken;
  auto sources = makeUsageSources(engine_, *client_, store_, clock_, metrics_.get(), env);
  if (!sources.isOk()) {
    log::error("bad policy", {{"error", sources.error()}});
    return false;
  }
  usage_ = std::move(sources.value());
  return true;
}

bool Runtime::startUsage() { return !usage_ || usage_->start(stop_); }

bool Runtime::serve() {
  server_ = std::make_unique<metrics::Server>(metrics_.get(), [this] { return readiness(); });
  if (options_.port == 0) return true;
  Status st = server_->start(options_.bindAddress, options_.port, options_.tls, clock_);
  if (!st.isOk()) {
    log::error("cannot start the metrics server", {{"error", st.message()}});
    return false;
  }
  return true;
}

bool Runtime::synced() const {
  for (const auto& r : reflectors_)
    if (!r->synced()) return false;
  return true;
}

metrics::Readiness Runtime::readiness() const { return readinessOf(synced(), health_.stale(), elector_.get()); }

bool Runtime::reportRefusedAccess() const {
  bool any = false;
  for (const kube::StaleResource& r : health_.staleResources()) {
    if (!r.denied) continue;
    log::error(
        "access to the cluster refused; no cycle runs",
        {{"resource", r.resource}, {"verb", r.verb}, {"reason", r.reason}, {"exit", kExitFailure}, {"hint", r.hint()}});
    any = true;
  }
  return any;
}

Runtime::Sync Runtime::startCache() {
  for (auto& r : reflectors_) r->start();
  const Clock::TimePoint deadline = clock_->now() + seconds(options_.syncTimeoutSeconds);
  while (!synced()) {
    if (stop_.cancelled()) return Sync::Stopped;
    // A one-shot run has no later cycle to wait for: a refused LIST ends it now, not after the
    // sync timeout. The daemon waits on, for the RBAC rule to be applied.
    if (options_.intervalSeconds <= 0 && reportRefusedAccess()) return Sync::Refused;
    if (clock_->now() > deadline) {
      log::error("the cache did not sync",
                 {{"timeout_seconds", options_.syncTimeoutSeconds},
                  {"stale", health_.stale()},
                  {"hint",
                   "check the API server address, credentials and RBAC (get/list/watch pods, nodes, namespaces, "
                   "poddisruptionbudgets, persistentvolumeclaims)"}});
      return Sync::TimedOut;
    }
    syncWaker_.sleep(*clock_, kSyncPoll, stop_);
  }
  log::info("caches synced", {{"pods", store_.count(api::Kind::Pod)},
                              {"nodes", store_.count(api::Kind::Node)},
                              {"pdbs", store_.count(api::Kind::PodDisruptionBudget)}});
  // The LIST pages and their decoding buffers are freed now; give those pages back to the system
  // rather than keep them as the process's high-water mark.
  malloc_trim(0);
  return Sync::Synced;
}

bool Runtime::lead(std::function<void()> onLost) {
  if (!elector_) return true;
  if (!elector_->acquire(stop_)) return false;
  elector_->startRenewing(std::move(onLost));
  // The API server just granted the Lease: a reflector still backing off from an outage it saw
  // while standby retries now, so the new leader's first cycle does not wait out up to 30 s.
  for (auto& r : reflectors_) r->retryNow("the API server answered another request (the Lease was granted)");
  return true;
}

bool Runtime::isLeader() const { return !elector_ || elector_->isLeader(); }

int Runtime::finish(int exitCode) {
  // The Events of this run's evictions are still being sent: give them a bounded time (on
  // SIGTERM they are dropped at once).
  if (events_) events_->drain(kEventDrainLimit);
  if (elector_) elector_->release();
  const bool clean = stopAll();
  log::info("stopped", {{"exit", exitCode}});
  // The metrics server closes its connections and ends its thread within its limit, open
  // keep-alive connections included. Only a thread stuck in a handler (a readiness or metrics
  // callback that blocks) is left running; a normal exit would then free what that thread still
  // uses. Every line is written already (the log flushes each one) and the Lease is released.
  if (!clean) std::_Exit(exitCode);
  return exitCode;
}

}  // namespace kdesched::daemon
