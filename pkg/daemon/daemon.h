// Wiring for the live modes: client, reflectors, metrics, leader election, and cycles on an
// interval (or once, for the CronJob/Job mode) through the same engine as `kdesched plan`.
#pragma once

#include <cstddef>
#include <string>

#include "pkg/kube/leader_election.h"
#include "pkg/metrics/tls.h"

namespace kdesched::daemon {

struct Options {
  std::string policyPath;
  double intervalSeconds = 0;  // 0: one cycle, then exit (CronJob/Job mode)
  bool dryRun = false;
  std::string kubeconfig;
  double qps = 0;  // 0: upstream's default (5)
  int burst = 0;   // 0: upstream's default (10)
  bool leaderElect = false;
  kube::LeaderElectionConfig leader;
  std::string bindAddress = "0.0.0.0";
  int port = 10258;         // 0: no metrics/health endpoint
  metrics::TlsOptions tls;  // HTTPS unless tls.plainHttp
  bool disableMetrics = false;
  // kdesched_owner_evictions_total's bounds: a series idle this long is removed, and at most this
  // many owner series exist (the rest count under the overflow series).
  double ownerEvictionsIdleSeconds = 3600;
  int ownerEvictionsMaxSeries = 500;
  double syncTimeoutSeconds = 120;  // the cache must sync within this, or the run fails
  // Every API request (a LIST page, an eviction, an Event, a Lease read or update), from sending it
  // to the answer's last byte; opening a watch too, up to its response headers.
  double requestTimeoutSeconds = 30;
  // A resource whose LIST and WATCH keep failing this long is stale: no cycle until it resyncs.
  // A refusal (401/403) makes it stale at once.
  double cacheStaleAfterSeconds = 120;
  // An open watch without an event or a bookmark this long is on a dead connection: cut and opened
  // again (reflector.h). 0: no bound.
  double watchSilenceSeconds = 75;
  // Send the service account token to a plain http:// Prometheus (upstream does; kdesched does not
  // unless asked: --prometheus-plain-http-token).
  bool prometheusPlainHttpToken = false;
  // Sync the cache by watch-list (one streaming WATCH per resource) while the API server allows
  // it; false: a paged LIST, always (--watch-list=false, KUBE_FEATURE_WatchListClient=false).
  bool watchList = true;
  // Read pods and nodes in protobuf (JSON where the server answers so, or after it refused protobuf); false:
  // JSON only (--kube-api-content-type application/json).
  bool protobuf = true;
  int evictionConcurrency = 4;  // eviction requests in flight (1: sequential, as upstream)
  // One-shot mode: exit 1 when the API server refused or failed evictions (forbidden, 5xx,
  // unreachable). Off by default: upstream exits 0 then, and a CronJob's Job is not retried.
  bool failOnEvictionErrors = false;
};

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // could not reach/sync with the API server (or not allowed to), lost leadership
inline constexpr int kExitBadInput = 2;  // bad policy, flags or kubeconfig

// The one-shot run's exit code once its cycle is over: `exitCode` as the cycle left it, raised to
// kExitFailure for hard eviction failures only when asked (failOnEvictionErrors) and not after a
// shutdown (a request cut short by SIGTERM is not the server refusing).
int oneShotExitCode(int exitCode, std::size_t hardFailures, bool stopped, bool failOnEvictionErrors);

// Runs until SIGTERM/SIGINT (interval mode) or after one cycle (interval 0). Call
// blockTerminationSignals() first thing in main, before any thread exists.
int run(const Options& options);
void blockTerminationSignals();
// Undoes blockTerminationSignals() for modes without the daemon's signal thread (plan).
void unblockTerminationSignals();

}  // namespace kdesched::daemon
