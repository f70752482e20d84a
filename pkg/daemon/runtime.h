// The live modes' long-lived parts, built once at start: the API client, the policy engine, the
// metrics and their HTTP server, the cache (store, reflectors and their health), the leader
// elector and the eviction API. What happens with them (cycles, triggered runs) is the
// CycleRunner's business; the order of start and stop is daemon::run's.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/cluster/store.h"
#include "pkg/daemon/daemon.h"
#include "pkg/daemon/sync_waker.h"
#include "pkg/daemon/usage_sources.h"
#include "pkg/engine/engine.h"
#include "pkg/evictor/async_events.h"
#include "pkg/kube/cache_health.h"
#include "pkg/kube/eviction_api.h"
#include "pkg/kube/leader_election.h"
#include "pkg/kube/reflector.h"
#include "pkg/metrics/observers.h"
#include "pkg/metrics/server.h"

namespace kdesched::daemon {

// A PriorityClass read from the API server (DefaultEvictor's priorityThreshold.name), and the
// answer as it came (a live plan saves it).
struct FetchedPriorityClass {
  api::PriorityClass object;
  std::string body;
};
Result<FetchedPriorityClass> getPriorityClass(kube::Client& client, const std::string& name);
// Its value.
Result<std::int32_t> readPriorityClass(kube::Client& client, const std::string& name);

// The API client of the live modes (the daemon, and the live plan): `config` with the flags
// --client-connection-qps/-burst (0: keep the config's) and --api-request-timeout applied.
Result<std::unique_ptr<kube::Client>> makeClient(kube::ClientConfig config, double qps, int burst,
                                                 double requestTimeoutSeconds, std::shared_ptr<Clock> clock);

// What /readyz answers: ready once every cache has synced and none is stale (`stale` as
// CacheFreshness::stale() says it); the reason names what is missing.
metrics::Readiness readinessOf(bool synced, const std::string& stale, const evictor::Leadership* leader);

class Runtime {
 public:
  // Builds everything and starts the metrics server. What fails (the kubeconfig, the policy, the
  // port) is logged, and null returned: bad input, exit 2.
  static std::unique_ptr<Runtime> create(const Options& options, std::shared_ptr<Clock> clock, Cancellation& stop);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  enum class Sync { Synced, Stopped, TimedOut, Refused };
  // Starts the reflectors and waits until every cache holds its first LIST (or shutdown, or the
  // sync timeout, which is logged with the RBAC hint). A one-shot run stops waiting at the first
  // refused LIST (Refused, logged with the resource and the verb): it would never sync.
  Sync startCache();
  // With leader election: blocks until this replica leads (false: shut down first), then renews in
  // the background; `onLost` runs once when leadership is lost. Without: true at once.
  bool lead(std::function<void()> onLost);
  // Leader (or no election).
  bool isLeader() const;
  // The elector, null without leader election.
  const evictor::Leadership* leadership() const { return elector_.get(); }
  // Releases the lease, stops the reflectors and the server, logs "stopped"; returns `exitCode`.
  int finish(int exitCode);

  Clock& clock() { return *clock_; }
  const std::shared_ptr<Clock>& sharedClock() const { return clock_; }
  const engine::Engine& engine() const { return engine_; }
  cluster::Store& store() { return store_; }
  kube::CacheHealth& health() { return health_; }
  metrics::Metrics* metrics() { return metrics_.get(); }
  // The eviction API as AsyncEvents fronts it: evictions go out at once, their Events through its
  // queue, drained by finish().
  evictor::EvictionApi& asyncEvents() { return *events_; }
  // The usage sources, null when no plugin balances by usage.
  UsageSources* usage() { return usage_.get(); }
  // Starts the metrics collector, if the policy needs one, and waits (bounded) for its first
  // collection. False: shut down meanwhile.
  bool startUsage();

 private:
  Runtime(const Options& options, std::shared_ptr<Clock> clock, Cancellation& stop)
      : options_(options),
        clock_(std::move(clock)),
        stop_(stop),
        health_(clock_, seconds(options.cacheStaleAfterSeconds)) {}
  bool connect();
  bool loadPolicy();
  // The metrics families (none with --disable-metrics), their watch observer, and the stale-cache
  // gauge's source.
  void buildMetrics();
  // The store and one reflector per cached resource (their observers: the cache's health, the
  // watch metrics, the sync waker).
  void buildCache();
  bool serve();
  bool buildUsage();
  bool synced() const;
  // Logs each resource the API server refused the cache access to (one error line each, with the
  // RBAC hint); true when there were any. A one-shot run calls it to stop at the first refusal.
  bool reportRefusedAccess() const;
  bool stopAll();  // false: the metrics server's thread did not end (see metrics::Server::stop)
  metrics::Readiness readiness() const;

  const Options options_;
  std::shared_ptr<Clock> clock_;
  Cancellation& stop_;
  std::unique_ptr<kube::Client> client_;
  engine::Engine engine_;
  std::unique_ptr<metrics::Metrics> metrics_;
  std::unique_ptr<metrics::WatchMetrics> watchMetrics_;
  cluster::Store store_;
  kube::CacheHealth health_;
  SyncWaker syncWaker_;
  std::unique_ptr<kube::ReflectorObservers> reflectorObservers_;
  std::vector<std::unique_ptr<kube::Reflector>> reflectors_;
  std::unique_ptr<UsageSources> usage_;
  std::unique_ptr<kube::LeaderElector> elector_;
  std::unique_ptr<metrics::Server> server_;
  std::unique_ptr<kube::KubeEvictionApi> evictionApi_;
  std::unique_ptr<evictor::AsyncEvents> events_;  // over evictionApi_: declared after it, destroyed before
};

}  // namespace kdesched::daemon
