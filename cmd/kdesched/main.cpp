// kdesched: flags and subcommands only; everything else lives in pkg/.
//   kdesched [upstream descheduler flags]   the daemon (interval) or one-shot (interval 0) mode
//   kdesched plan ...                       one cycle with the plan sink, on a snapshot file or the cluster
//   kdesched version
//   kubectl-kdesched ...                    the kubectl plugin (kubectl_plugin.h), by argv[0]
#include <CLI/CLI.hpp>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cmd/kdesched/kubectl_plugin.h"
#include "cmd/kdesched/kubectl_plugin_args.h"
#include "cmd/kdesched/plan_source.h"
#include "cmd/kdesched/snapshot_file.h"
#include "cmd/kdesched/upstream_flags.h"
#include "cmd/kdesched/validators.h"
#include "pkg/api/timestamp.h"
#include "pkg/base/log.h"
#include "pkg/daemon/daemon.h"
#include "pkg/daemon/live_plan.h"
#include "pkg/daemon/runtime.h"
#include "pkg/kube/config.h"
#include "pkg/kube/wire.h"
#include "pkg/metrics/metrics.h"
#include "pkg/metrics/tls.h"
#include "pkg/plan/plan.h"
#include "pkg/policy/args.h"

namespace {

constexpr int kExitBadInput = 2;

std::string oneLine(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = ';';
  return s;
}

// Duration flags take Go durations ("5m", "2s", "1h30m"), as upstream's do.
bool durationFlag(const std::string& flag, const std::string& value, double& seconds) {
  auto d = kdesched::policy::parseDuration(value);
  if (!d || *d < 0) {
    std::cerr << "kdesched: " << flag << ": not a duration (like 5m, 30s, 1h): \"" << value << "\"\n";
    return false;
  }
  seconds = *d;
  return true;
}

// A duration that must not be zero: these bound how long kdesched waits, and have no "off".
bool positiveDurationFlag(const std::string& flag, const std::string& value, double& seconds) {
  if (!durationFlag(flag, value, seconds)) return false;
  if (seconds >= 0.001) return true;
  std::cerr << "kdesched: " << flag << ": must be at least 1ms, got \"" << value << "\"\n";
  return false;
}

std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// The daemon's flags, upstream's names; durations as Go durations until checked.
struct DaemonFlags {
  kdesched::daemon::Options d;
  std::string interval = "0", leaseDuration = "2m17s", renewDeadline = "1m47s", retryPeriod = "26s";
  std::string requestTimeout = "30s", cacheStaleAfter = "2m", watchSilence = "75s", ownerIdle = "1h";
  std::string resourceLock = "leases", loggingFormat = "text", clientKubeconfig;
  std::string contentType = "application/vnd.kubernetes.protobuf";
  int verbosity = 0;
  bool watchList = true;
  CLI::Option* watchListFlag = nullptr;  // given or not: else the environment decides
  std::vector<std::string> ignored;      // upstream flags taken out before parsing (upstream_flags.h)
  std::vector<std::string> repeated;     // flags given more than once (the last value kept)
};

void addDaemonFlags(CLI::App& app, DaemonFlags& f) {
  app.add_option("--policy-config-file", f.d.policyPath, "DeschedulerPolicy (descheduler/v1alpha2) file");
  app.add_option("--descheduling-interval", f.interval,
                 "Time between cycles (Go duration); 0 runs one cycle and exits (CronJob/Job mode)")
      ->capture_default_str();
  app.add_flag("--dry-run", f.d.dryRun, "Decide and log, evict nothing (PDB budgets and limits still accounted)");
  app.add_option("--kubeconfig", f.d.kubeconfig,
                 "Kubeconfig file (deprecated upstream alias of --client-connection-kubeconfig)");
  app.add_option("--client-connection-kubeconfig", f.clientKubeconfig,
                 "Kubeconfig file; without one, in-cluster config is used");
  app.add_option("--client-connection-qps", f.d.qps, "Client-side requests per second (0: 5)")
      ->check(kdesched::cmd::nonNegative());
  app.add_option("--client-connection-burst", f.d.burst, "Client-side burst (0: 10)")
      ->check(kdesched::cmd::nonNegative());
  app.add_flag("--leader-elect", f.d.leaderElect, "Run only while holding a coordination.k8s.io Lease");
  app.add_option("--leader-elect-lease-duration", f.leaseDuration, "Lease duration")->capture_default_str();
  app.add_option("--leader-elect-renew-deadline", f.renewDeadline, "Renew deadline")->capture_default_str();
  app.add_option("--leader-elect-retry-period", f.retryPeriod, "Retry period")->capture_default_str();
  app.add_option("--leader-elect-resource-lock", f.resourceLock, "Lock type (only leases)")
      ->check(CLI::IsMember({"leases"}));
  app.add_option("--leader-elect-resource-name", f.d.leader.name, "Lease name")->capture_default_str();
  app.add_option("--leader-elect-resource-namespace", f.d.leader.ns, "Lease namespace")->capture_default_str();
  app.add_option("--bind-address", f.d.bindAddress, "Address of the /metrics, /healthz, /readyz endpoint")
      ->capture_default_str();
  app.add_option("--secure-port", f.d.port, "Port of that endpoint (HTTPS unless --plain-http; 0 disables it)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--tls-cert-file", f.d.tls.certFile,
                 "Serving certificate (PEM, chain after the leaf); without it a self-signed one is made at start");
  app.add_option("--tls-private-key-file", f.d.tls.keyFile, "Private key (PEM) of --tls-cert-file");
  app.add_option("--tls-min-version", f.d.tls.minVersion,
                 "Lowest TLS version served: VersionTLS10, VersionTLS11, VersionTLS12 (default), VersionTLS13");
  app.add_option("--tls-cipher-suites", f.d.tls.cipherSuites,
                 "Comma-separated cipher suites for TLS 1.0-1.2, Go's names (TLS 1.3 suites are always on)")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);  // pflag's StringSlice: each one adds
  app.add_flag("--plain-http", f.d.tls.plainHttp,
               "kdesched only: serve /metrics and the probes over plain HTTP instead of HTTPS");
  app.add_flag("--disable-metrics", f.d.disableMetrics, "Do not register metrics");
  app.add_option("--owner-evictions-idle", f.ownerIdle,
                 "kdesched only: a kdesched_owner_evictions_total series without an eviction this long (Go "
                 "duration) is removed")
      ->capture_default_str();
  app.add_option("--owner-evictions-max-series", f.d.ownerEvictionsMaxSeries,
                 "kdesched only: kdesched_owner_evictions_total keeps at most this many workload series; further "
                 "workloads count under owner_name=\"_overflow\" (0: every eviction does)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  app.add_option("-v,--v", f.verbosity, "Log verbosity (0-2 info, 3-5 debug, 6+ trace)");
  app.add_option("--logging-format", f.loggingFormat, "text or json")->check(CLI::IsMember({"text", "json"}));
  app.add_option("--eviction-concurrency", f.d.evictionConcurrency,
                 "Eviction requests in flight at once (1: one at a time, as upstream; all under the QPS limit)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_flag("--fail-on-eviction-errors", f.d.failOnEvictionErrors,
               "One-shot mode: exit 1 when the API server refused or failed evictions (upstream exits 0)");
  app.add_option("--cache-sync-timeout", f.d.syncTimeoutSeconds, "Seconds to wait for the first LIST of every resource")
      ->capture_default_str();
  app.add_option("--api-request-timeout", f.requestTimeout,
                 "kdesched only: the longest one API request may take (Go duration; a watch: until it is opened)")
      ->capture_default_str();
  f.watchListFlag =
      app.add_flag("--watch-list", f.watchList,
                   "kdesched only: sync the cache by watch-list, one streaming WATCH per resource (true), or by a "
                   "paged LIST (false); default: KUBE_FEATURE_WatchListClient as client-go reads it, else true. "
                   "Falls back to the LIST by itself where the API server refuses watch-lists");
  app.add_option(
         "--kube-api-content-type", f.contentType,
         "kdesched only (kube-scheduler's and kube-controller-manager's name): how the pods and nodes caches are read, "
         "application/vnd.kubernetes.protobuf (JSON where the API server answers so or refuses protobuf) "
         "or application/json")
      ->capture_default_str()
      ->check(CLI::IsMember({"application/vnd.kubernetes.protobuf", "application/json"}));
  app.add_option("--cache-stale-after", f.cacheStaleAfter,
                 "kdesched only: a resource whose LIST and WATCH keep failing this long (Go duration) is stale: no "
                 "cycle until it resyncs (a 401/403 makes it stale at once)")
      ->capture_default_str();
  app.add_flag("--prometheus-plain-http-token", f.d.prometheusPlainHttpToken,
               "kdesched only: in a pod, send the service account token to a plain http:// Prometheus too (upstream "
               "does; by default kdesched sends it over https only)");
  app.add_option("--watch-silence-timeout", f.watchSilence,
                 "kdesched only: an open watch without an event or a bookmark this long (Go duration; the API "
                 "server sends a bookmark a minute) is on a dead connection: cut and opened again; 0: no bound")
      ->capture_default_str();
}

struct PlanFlags {
  kdesched::plan::PlanOptions options;
  std::string format = "table";
  std::string now;
  kdesched::cmd::PlanSourceFlags source;
  double qps = 0;
  int burst = 0;
  std::string requestTimeout = "30s";
  std::vector<CLI::Option*> liveOnly, snapshotOnly;  // to tell which were given
};

void addPlanLiveFlags(CLI::App* plan, PlanFlags& f) {
  plan->add_option("--kubeconfig", f.source.kubeconfig,
                   "Read the cluster with this kubeconfig instead of a snapshot file (in a pod, without --snapshot "
                   "or --kubeconfig, in-cluster config is used); nothing is written to the cluster");
  plan->add_option("--client-connection-kubeconfig", f.source.clientKubeconfig, "The same as --kubeconfig");
  plan->add_option("--save-snapshot", f.source.saveSnapshot,
                   "Also write what was read from the cluster to FILE, a snapshot for --snapshot; replayed with the "
                   "same policy and the --now printed on stderr, it gives the same plan byte for byte");
  f.liveOnly.push_back(plan->add_option("--client-connection-qps", f.qps, "Client-side requests per second (0: 5)")
                           ->check(kdesched::cmd::nonNegative()));
  f.liveOnly.push_back(plan->add_option("--client-connection-burst", f.burst, "Client-side burst (0: 10)")
                           ->check(kdesched::cmd::nonNegative()));
  f.liveOnly.push_back(
      plan->add_option("--api-request-timeout", f.requestTimeout, "The longest one API request may take (Go duration)")
          ->capture_default_str());
}

CLI::App* addPlanCommand(CLI::App& app, PlanFlags& f) {
  CLI::App* plan = app.add_subcommand(
      "plan",
      "Run one descheduling cycle on a snapshot file, or on the cluster as it is now, and print what would be "
      "evicted, and why (evicts nothing)");
  plan->add_option("--snapshot", f.source.snapshot,
                   "Cluster snapshot: `kubectl get nodes,pods,pdb,namespaces,priorityclasses,pvc -A -o json` (or -o "
                   "yaml); for metricsUtilization by metrics-server, with `kubectl get --raw "
                   "/apis/metrics.k8s.io/v1beta1/nodes` (and /pods) appended");
  plan->add_option("--policy-config-file", f.options.policyPath, "DeschedulerPolicy (descheduler/v1alpha2) file")
      ->required();
  plan->add_option("-o,--output", f.format, "Output format")->check(CLI::IsMember({"table", "json"}));
  f.snapshotOnly.push_back(plan->add_option("--max-snapshot-bytes", f.options.maxSnapshotBytes,
                                            "Refuse a snapshot file larger than this (default 1 GiB)")
                               ->check(CLI::PositiveNumber));
  plan->add_option("--now", f.now,
                   "Make the plan at this RFC 3339 time: age-based checks (minPodAge) and the age of usage samples "
                   "are judged at it. Default: for --snapshot, the current time for ages and the newest sample's "
                   "time for usage; read from the cluster, the time it was read");
  plan->add_option("--prometheus-result", f.options.prometheusResultPath,
                   "The JSON answer of Prometheus' /api/v1/query to the policy's metricsUtilization.prometheus.query "
                   "(a vector, one sample per node: instance = node name, value in [0, 1]); also for a plan read "
                   "from the cluster, which never queries Prometheus itself");
  plan->add_option("--explain", f.options.explain,
                   "After the plan, say for pod NAMESPACE/NAME what every profile and plugin made of it, in order: "
                   "skipped (and why, with the numbers), refused (by which filter, limit or PDB) or evicted; "
                   "repeatable; a pod that is not there fails the plan (exit 2) after it is printed")
      ->expected(1)
      ->take_all();
  addPlanLiveFlags(plan, f);
  return plan;
}

std::string shellWord(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:+,@") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A plan read from the cluster: the client as the daemon's, the snapshot to save opened first (a
// path that cannot be written fails before any request).
int runLivePlanCommand(PlanFlags& f, const kdesched::cmd::PlanSource& source) {
  double timeout = 0;
  if (!positiveDurationFlag("--api-request-timeout", f.requestTimeout, timeout)) return kExitBadInput;
  auto config = source.kind == kdesched::cmd::PlanSource::Kind::InCluster ? kdesched::kube::loadInClusterConfig()
                                                                          : kdesched::kube::loadKubeconfig(source.path);
  if (!config.isOk()) {
    std::cerr << "kdesched: " << oneLine(config.error()) << "\n";
    return kExitBadInput;
  }
  auto client = kdesched::daemon::makeClient(std::move(*config), f.qps, f.burst, timeout, kdesched::systemClock());
  if (!client.isOk()) {
    std::cerr << "kdesched: cannot set up the API client: " << oneLine(client.error()) << "\n";
    return kExitBadInput;
  }
  const std::string& savePath = f.source.saveSnapshot;
  std::optional<kdesched::cmd::SnapshotFile> save;
  if (!savePath.empty()) {
    auto created = kdesched::cmd::SnapshotFile::create(
        savePath, {f.options.policyPath, f.options.prometheusResultPath, source.path}, static_cast<long>(::getpid()));
    if (!created.isOk()) {
      std::cerr << "kdesched: " << created.error() << "\n";
      return kExitBadInput;
    }
    save.emplace(std::move(created).value());
  }
  const kdesched::api::Timestamp readAt =
      std::chrono::floor<std::chrono::seconds>(kdesched::systemClock()->wallNow().time_since_epoch()).count();
  auto failed = kdesched::daemon::runLivePlan(**client, f.options, readAt, std::cout, save ? &save->stream() : nullptr);
  // What was read is written whole before the cycle runs: kept also when the plan then failed (on
  // an object it cannot decode, say), so the file shows why; nothing read, nothing saved.
  if (save && (!failed || save->stream().tellp() > 0)) {
    if (kdesched::Status saved = save->commit(); !saved.isOk()) {
      std::cerr << "kdesched: " << saved.message() << "\n";
      return kdesched::daemon::kExitFailure;
    }
  }
  save.reset();
  if (failed) {
    std::cerr << "kdesched: " << oneLine(failed->message) << "\n";
    return failed->exitCode;
  }
  if (!savePath.empty()) {
    const std::string at = kdesched::kube::rfc3339(
        kdesched::Clock::WallTime{} + std::chrono::seconds(f.options.now.value_or(readAt)), false);
    std::cerr << "kdesched: saved what was read to " << savePath << "; replay: kdesched plan --snapshot "
              << shellWord(savePath) << " --policy-config-file " << shellWord(f.options.policyPath) << " --now " << at
              << (f.format == "json" ? " -o json" : "")
              << (f.options.prometheusResultPath.empty()
                      ? ""
                      : " --prometheus-result " + shellWord(f.options.prometheusResultPath))
              << "\n";
  }
  return 0;
}

int runPlanCommand(PlanFlags& f) {
  f.options.format = f.format == "json" ? kdesched::plan::OutputFormat::Json : kdesched::plan::OutputFormat::Table;
  if (!f.now.empty()) {
    auto ts = kdesched::api::parseTimestamp(f.now);
    if (!ts.isOk()) {
      std::cerr << "kdesched: --now: " << ts.error() << "\n";
      return kExitBadInput;
    }
    f.options.now = *ts;
  }
  for (CLI::Option* o : f.liveOnly)
    if (o->count()) f.source.liveOnly.push_back(o->get_name());
  for (CLI::Option* o : f.snapshotOnly)
    if (o->count()) f.source.snapshotOnly.push_back(o->get_name());
  auto source =
      kdesched::cmd::choosePlanSource(f.source, std::getenv("KUBERNETES_SERVICE_HOST"), std::getenv("KUBECONFIG"));
  if (!source.isOk()) {
    std::cerr << "kdesched: " << source.error() << "\n";
    return kExitBadInput;
  }
  if (source->kind != kdesched::cmd::PlanSource::Kind::Snapshot) return runLivePlanCommand(f, *source);
  f.options.snapshotPath = source->path;
  kdesched::Status st = kdesched::plan::runPlan(f.options, std::cout);
  if (!st.isOk()) {
    std::cerr << "kdesched: " << oneLine(st.message()) << "\n";
    return kExitBadInput;
  }
  return 0;
}

// The daemon / one-shot mode.
int runDaemon(DaemonFlags& f) {
  if (f.d.policyPath.empty()) {
    std::cerr << "kdesched: --policy-config-file is required (a descheduler/v1alpha2 DeschedulerPolicy)\n";
    return kExitBadInput;
  }
  if (!f.clientKubeconfig.empty()) f.d.kubeconfig = f.clientKubeconfig;
  f.d.protobuf = f.contentType != "application/json";
  double lease = 0, renew = 0, retry = 0;
  if (!durationFlag("--descheduling-interval", f.interval, f.d.intervalSeconds) ||
      !durationFlag("--leader-elect-lease-duration", f.leaseDuration, lease) ||
      !durationFlag("--leader-elect-renew-deadline", f.renewDeadline, renew) ||
      !durationFlag("--leader-elect-retry-period", f.retryPeriod, retry) ||
      !positiveDurationFlag("--api-request-timeout", f.requestTimeout, f.d.requestTimeoutSeconds) ||
      !positiveDurationFlag("--cache-stale-after", f.cacheStaleAfter, f.d.cacheStaleAfterSeconds) ||
      !positiveDurationFlag("--owner-evictions-idle", f.ownerIdle, f.d.ownerEvictionsIdleSeconds) ||
      !durationFlag("--watch-silence-timeout", f.watchSilence, f.d.watchSilenceSeconds))
    return kExitBadInput;
  if (f.d.watchSilenceSeconds > 0 && f.d.watchSilenceSeconds < 1) {
    std::cerr << "kdesched: --watch-silence-timeout: must be 0 (no bound) or at least 1s, got \"" << f.watchSilence
              << "\"\n";
    return kExitBadInput;
  }
  f.d.leader.leaseDuration = ms(lease);
  f.d.leader.renewDeadline = ms(renew);
  f.d.leader.retryPeriod = ms(retry);
  if (auto st = kdesched::log::setup(f.loggingFormat, f.verbosity); !st.isOk()) {
    std::cerr << "kdesched: " << st.message() << "\n";
    return kExitBadInput;
  }
  std::string gateWarning;
  f.d.watchList =
      kdesched::cmd::watchListEnabled(f.watchListFlag->count() > 0 ? std::optional<bool>(f.watchList) : std::nullopt,
                                      std::getenv("KUBE_FEATURE_WatchListClient"), gateWarning);
  if (!gateWarning.empty()) kdesched::log::warn("ignoring a client feature gate", {{"detail", gateWarning}});
  if (!f.ignored.empty()) {
    std::string names;
    for (const auto& n : f.ignored) names += (names.empty() ? "" : ",") + n;
    kdesched::log::warn("ignoring upstream flags kdesched does not implement", {{"flags", names}});
  }
  if (!f.repeated.empty()) {
    std::string names;
    for (const auto& n : f.repeated) names += (names.empty() ? "" : ",") + n;
    kdesched::log::warn("flags given more than once: the last value is used, as upstream", {{"flags", names}});
  }
  // Checked before anything connects, as upstream's serving options are.
  if (!f.d.tls.plainHttp && f.d.port != 0) {
    kdesched::Status st = kdesched::metrics::tlsMinVersion(f.d.tls.minVersion).status();
    if (st.isOk()) st = kdesched::metrics::tlsCipherSuites(f.d.tls.cipherSuites).status();
    if (!st.isOk()) {
      std::cerr << "kdesched: " << st.message() << "\n";
      return kExitBadInput;
    }
  }
  if (f.d.leaderElect && f.d.dryRun) {
    kdesched::log::warn("--leader-elect is ignored with --dry-run",
                        {{"hint", "a dry run evicts nothing, so replicas cannot conflict"}});
    f.d.leaderElect = false;
  }
  if (f.d.leaderElect) {
    if (f.d.intervalSeconds <= 0) {
      std::cerr
          << "kdesched: leaderElection must be used with deschedulingInterval (set --descheduling-interval > 0)\n";
      return kExitBadInput;
    }
    if (auto st = kdesched::kube::validateLeaderElection(f.d.leader); !st.isOk()) {
      std::cerr << "kdesched: " << st.message() << "\n";
      return kExitBadInput;
    }
  }
  return kdesched::daemon::run(f.d);
}

}  // namespace

int main(int argc, char** argv) {
  // Installed as kubectl-kdesched (a symlink on PATH), the binary is the kubectl plugin.
  if (argc > 0 && kdesched::cmd::isKubectlPluginName(argv[0])) {
    kdesched::log::setLevel(kdesched::log::Level::Warn);
    return kdesched::cmd::runKubectlPlugin(argc, argv);
  }
  // Before any thread exists, so the signal thread alone receives SIGTERM/SIGINT.
  kdesched::daemon::blockTerminationSignals();
  // glibc gives each thread that allocates its own arena (up to 8 per core), each keeping its
  // freed pages: the reflectors, eviction workers and HTTP threads each held ~1.5 MB. Two arenas
  // cost no measurable contention here (one thread decides; the others mostly wait on sockets).
  mallopt(M_ARENA_MAX, 2);
  // A fixed threshold (it also turns off glibc's dynamic one, which rises to the largest block
  // freed so far): LIST page bodies and their decoder buffers (2-4 MB each) stay separate mappings
  // that go back to the system when freed, instead of heap that keeps the high-water mark.
  // Measured on a one-shot dry run at S1: peak RSS 28.8 MB -> 25.9 MB.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Logs go to stderr so stdout carries only the plan (machine-readable with -o json); the plan
  // logs only warnings.
  kdesched::log::setLevel(kdesched::log::Level::Warn);

  CLI::App app{
      "kdesched: a Kubernetes descheduler, policy- and flag-compatible with kubernetes-sigs/descheduler.\n"
      "Without a subcommand it runs the descheduler against the cluster.",
      "kdesched"};
  app.require_subcommand(0, 1);

  // The daemon's flags are upstream's, read as pflag reads them: a flag given twice keeps the last
  // value. plan's are kdesched's own and refuse a repeat.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  DaemonFlags daemonFlags;
  addDaemonFlags(app, daemonFlags);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  PlanFlags planFlags;
  CLI::App* plan = addPlanCommand(app, planFlags);
  CLI::App* version = app.add_subcommand("version", "Print the version");
  bool listMetrics = false;
  version->add_flag("--metrics", listMetrics,
                    "Instead, print every metric this build exports (its HELP and TYPE lines), series or not");

  // The daemon takes upstream's command line as pflag reads it; plan and version are kdesched's own.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || (args[0] != "plan" && args[0] != "version")) {
    auto upstream = kdesched::cmd::normalizeUpstreamArgs(args);
    args = std::move(upstream.args);
    daemonFlags.ignored = std::move(upstream.ignored);
    daemonFlags.repeated = std::move(upstream.repeated);
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kdesched: " << e.what() << " (see --help)\n";
    return kExitBadInput;
  }

  if (version->parsed()) {
    std::cout << (listMetrics ? kdesched::metrics::Metrics::catalogue(KDESCHED_VERSION)
                              : std::string("kdesched ") + KDESCHED_VERSION + "\n");
    return 0;
  }
  if (plan->parsed()) {
    // Only the daemon has a signal thread: plan must stop on SIGINT/SIGTERM the default way.
    kdesched::daemon::unblockTerminationSignals();
    return runPlanCommand(planFlags);
  }
  return runDaemon(daemonFlags);
}
