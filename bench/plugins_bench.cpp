// Per-plugin micro-benchmarks on generated clusters (3k, 30k, 150k pods): one cycle of one plugin
// through the real engine and evictor with the plan sink. Reported per pod, so near-linear growth
// shows as a flat ns/pod across sizes. BM_AllFour runs the four strategies together (the engine
// benchmark's policy), BM_AllEleven every plugin in one profile; BM_MakeRoomForPendingPods with
// 1% of the pods pending; BM_TriggeredRun/pods/scope a run
// of its deschedule plugins on a scope of pods, as after pod events; BM_DecodeSnapshot / BM_DecodeWire measure JSON →
// store throughput on the compact and on API-server-shaped (~4 KB/pod) objects. BM_*Usage and
// BM_LowNodeUtilizationPrometheus balance by measured usage (kdesched-gen --metrics): the usage is
// built once per size, outside the timed loop, and handed to every cycle as the daemon does.
//
// Second mode, used by bench/run.sh engine (one process per size, so peak RSS is per size):
//   plugins_bench --engine --snapshot FILE --policy FILE [--cycles N] [--prometheus-result FILE]
// reads the file, decodes it into a Store, builds the indexed snapshot and runs N cycles, and
// prints one JSON line: decode and cycle wall and thread-CPU seconds, MB/s, heap bytes in use per
// cached pod (mallinfo2 delta over decode + snapshot, the allocator's own count) and RSS. When the
// policy balances by usage, the cycles get the usage `kdesched plan` builds (the loader's
// NodeMetrics/PodMetrics and plan::planUsage), and usage_heap_bytes_per_pod is the heap it keeps.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "bench/cluster_gen.h"
#include "pkg/cluster/loader.h"
#include "pkg/engine/engine.h"
#include "pkg/plan/usage_input.h"
#include "pkg/usage/decode.h"

namespace {

using namespace kdesched;

struct Fixture {
  cluster::Store store;
  cluster::SnapshotPtr snapshot;
  usage::ClusterUsage usage;  // as the daemon hands it to a cycle: metrics-server and one query
};

// The query the Prometheus benchmark policies name; the generator's answer is its result.
constexpr const char* kPrometheusQuery = "instance:node_cpu:ratio";

bench::GenOptions sized(int pods) {
  bench::GenOptions o;
  o.pods = pods;
  o.nodes = std::max(10, pods / 30);
  o.namespaces = std::max(6, pods / 100);
  return o;
}

const Fixture& fixture(int pods) {
  static std::map<int, std::unique_ptr<Fixture>> cache;
  auto& f = cache[pods];
  if (!f) {
    f = std::make_unique<Fixture>();
    bench::GenOptions o = sized(pods);
    o.metrics = true;  // the cluster is the same as without: the metrics are drawn apart
    std::string answer;
    usage::SourceReadings metrics;
    auto r = cluster::loadSnapshot(bench::generateSnapshotJson(o, nullptr, &answer), "generated", f->store, &metrics);
    if (!r.isOk()) throw std::runtime_error(r.error());
    f->snapshot = f->store.snapshot();
    metrics.origin = "metrics-server";
    f->usage.kubernetesMetrics = std::move(metrics);
    usage::SourceReadings prom;
    prom.source = usage::Source::Prometheus;
    prom.origin = "Prometheus";
    if (Status st = usage::decodePrometheusAnswer(answer, prom); !st.isOk()) throw std::runtime_error(st.message());
    f->usage.prometheus.emplace(kPrometheusQuery, std::move(prom));
    f->usage.asOf = bench::kMetricsUnixTime + 15;  // the cycle starts 15 s after the scrape
  }
  return *f;
}

// The cluster of `fixture(pods)` plus 1% more pods, Pending and Unschedulable for an hour, ten per
// ReplicaSet (a scale-up each), each asking for 31 CPU: no node has that free, and no two moves
// free it, so MakeRoomForPendingPods looks at every node for every pending pod it searches (its
// worst case: nothing to do, everything to look at).
const Fixture& pendingFixture(int pods) {
  static std::map<int, std::unique_ptr<Fixture>> cache;
  auto& f = cache[pods];
  if (!f) {
    f = std::make_unique<Fixture>();
    auto r = cluster::loadSnapshot(bench::generateSnapshotJson(sized(pods)), "generated", f->store);
    if (!r.isOk()) throw std::runtime_error(r.error());
    std::ostringstream list;
    list << R"({"apiVersion":"v1","kind":"List","items":[)";
    for (int i = 0; i < pods / 100; ++i) {
      list << (i ? "," : "") << R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"pending-)" << i
           << R"(","namespace":"default","uid":"pending-uid-)" << i
           << R"(","creationTimestamp":"2027-01-15T07:00:00Z","ownerReferences":[{"apiVersion":"apps/v1","kind":)"
           << R"("ReplicaSet","name":"scale-up-)" << i / 10 << R"(","uid":"rs-uid-)" << i / 10
           << R"(","controller":true}]},"spec":{"containers":[{"name":"app","image":"registry.example/big:1.0",)"
           << R"("resources":{"requests":{"cpu":"31","memory":"1Gi"}}}]},"status":{"phase":"Pending","conditions":)"
           << R"([{"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
           << R"("lastTransitionTime":"2027-01-15T07:00:00Z"}]}})";
    }
    list << "]}";
    r = cluster::loadSnapshot(list.str(), "pending", f->store);
    if (!r.isOk()) throw std::runtime_error(r.error());
    f->snapshot = f->store.snapshot();
  }
  return *f;
}

const char* kPluginConfigs =
    "  - name: RemovePodsViolatingInterPodAntiAffinity\n"
    "  - name: RemovePodsViolatingNodeAffinity\n"
    "    args: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]}\n"
    "  - name: LowNodeUtilization\n"
    "    args: {thresholds: {cpu: 20, memory: 20, pods: 20}, targetThresholds: {cpu: 60, memory: 60, pods: 60}}\n"
    "  - name: RemovePodsViolatingTopologySpreadConstraint\n";

// The six plugins added after the first four, with the args upstream's chart and docs use.
const char* kMorePluginConfigs =
    "  - name: RemoveDuplicates\n"
    "  - name: RemovePodsViolatingNodeTaints\n"
    "  - name: HighNodeUtilization\n"
    "    args: {thresholds: {cpu: 20, memory: 20}}\n"
    "  - name: PodLifeTime\n"
    "    args: {maxPodLifeTimeSeconds: 86400, states: [Running]}\n"
    "  - name: RemoveFailedPods\n"
    "    args: {minPodLifetimeSeconds: 3600}\n"
    "  - name: RemovePodsHavingTooManyRestarts\n"
    "    args: {podRestartThreshold: 100, includingInitContainers: true}\n";

// `providers`: the policy's top-level metricsProviders block, for plugins that balance by usage.
std::string policyFor(const std::string& plugin, const std::string& point, const std::string& args,
                      const std::string& providers = "") {
  return "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n" + providers +
         "profiles:\n- name: bench\n  pluginConfig:\n"
         "  - name: DefaultEvictor\n    args: {nodeFit: true}\n  - name: " +
         plugin + "\n" + args + "  plugins:\n    " + point + ":\n      enabled: [" + plugin + "]\n";
}

const char* kMetricsServer = "metricsProviders:\n- source: KubernetesMetrics\n";
const char* kPrometheus = "metricsProviders:\n- source: Prometheus\n  prometheus: {url: http://prometheus:9090}\n";

std::string allFourPolicy() {
  return std::string(
             "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: bench\n  pluginConfig:\n"
             "  - name: DefaultEvictor\n") +
         kPluginConfigs +
         "  plugins:\n"
         "    deschedule: {enabled: [RemovePodsViolatingInterPodAntiAffinity, RemovePodsViolatingNodeAffinity]}\n"
         "    balance: {enabled: [LowNodeUtilization, RemovePodsViolatingTopologySpreadConstraint]}\n";
}

// Every plugin kdesched has in one profile (upstream's eleven, DefaultEvictor included).
std::string allElevenPolicy() {
  return std::string(
             "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: bench\n  pluginConfig:\n"
             "  - name: DefaultEvictor\n") +
         kPluginConfigs + kMorePluginConfigs +
         "  plugins:\n"
         "    deschedule: {enabled: [RemovePodsViolatingInterPodAntiAffinity, RemovePodsViolatingNodeAffinity,\n"
         "      RemovePodsViolatingNodeTaints, PodLifeTime, RemoveFailedPods, RemovePodsHavingTooManyRestarts]}\n"
         "    balance: {enabled: [RemoveDuplicates, LowNodeUtilization, HighNodeUtilization,\n"
         "      RemovePodsViolatingTopologySpreadConstraint]}\n";
}

void runPlugin(benchmark::State& state, const std::string& policyYaml, bool byUsage = false) {
  const Fixture& f = fixture(static_cast<int>(state.range(0)));
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(1800000000);
  ctx.priorityClassValue = [&f](const std::string& name) -> Result<std::int32_t> {
    if (const api::PriorityClass* pc = f.snapshot->priorityClass(name)) return pc->value;
    return Status::error("no PriorityClass " + name);
  };
  auto engine = engine::buildEngineFromText(policyYaml, "bench.yaml", ctx);
  if (!engine.isOk()) {
    state.SkipWithError(engine.error().c_str());
    return;
  }
  std::size_t evicted = 0;
  for (auto _ : state) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    framework::CycleResult r = engine->runCycle(*f.snapshot, chain, nullptr, {}, byUsage ? &f.usage : nullptr);
    evicted = sink.evictions().size();
    benchmark::DoNotOptimize(evicted);
    // A plugin that failed (no usable usage, say) did no work: its time would mean nothing.
    auto failed = std::find_if(r.runs.begin(), r.runs.end(), [](const auto& run) { return !run.status.isOk(); });
    if (failed != r.runs.end()) {
      state.SkipWithError((failed->plugin + ": " + failed->status.message()).c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(f.snapshot->podCount()));
  state.counters["pods"] = static_cast<double>(f.snapshot->podCount());
  state.counters["evicted"] = static_cast<double>(evicted);
  state.counters["ns_per_pod"] =
      benchmark::Counter(static_cast<double>(f.snapshot->podCount()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// An event-triggered run: the six deschedule plugins of BM_AllEleven on `scope` pods (the first of
// every pods().size()/scope pods, as a burst of changes spread over the cluster would be), balance
// plugins off, as a run seeded by pod events is. Per run, not per pod: how its cost grows with
// the scope (and the cluster) is the figure.
void BM_TriggeredRun(benchmark::State& state) {
  const Fixture& f = fixture(static_cast<int>(state.range(0)));
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(1800000000);
  ctx.priorityClassValue = [&f](const std::string& name) -> Result<std::int32_t> {
    if (const api::PriorityClass* pc = f.snapshot->priorityClass(name)) return pc->value;
    return Status::error("no PriorityClass " + name);
  };
  auto engine = engine::buildEngineFromText(allElevenPolicy(), "bench.yaml", ctx);
  if (!engine.isOk()) {
    state.SkipWithError(engine.error().c_str());
    return;
  }
  const auto& pods = f.snapshot->pods();
  const std::size_t want = static_cast<std::size_t>(state.range(1));
  auto names = std::make_shared<api::PodNames>();
  for (std::size_t i = 0; i < pods.size() && names->size() < want; i += std::max<std::size_t>(1, pods.size() / want))
    names->insert(api::PodName::of(*pods[i]));
  framework::CycleScope scope;
  scope.runBalance = false;
  scope.pods = names;
  for (auto _ : state) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    benchmark::DoNotOptimize(engine->runCycle(*f.snapshot, chain, nullptr, scope));
  }
  state.counters["scope"] = static_cast<double>(names->size());
}

// MakeRoomForPendingPods with 1% of the pods pending (pendingFixture): per pod of the cluster, as
// the other plugins, so growth with the cluster shows as a rising ns/pod.
void BM_MakeRoomForPendingPods(benchmark::State& state) {
  const Fixture& f = pendingFixture(static_cast<int>(state.range(0)));
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(1800000000);
  auto engine = engine::buildEngineFromText(policyFor("MakeRoomForPendingPods", "deschedule", ""), "bench.yaml", ctx);
  if (!engine.isOk()) {
    state.SkipWithError(engine.error().c_str());
    return;
  }
  for (auto _ : state) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    benchmark::DoNotOptimize(engine->runCycle(*f.snapshot, chain));
  }
  state.counters["pods"] = static_cast<double>(f.snapshot->podCount());
  state.counters["ns_per_pod"] =
      benchmark::Counter(static_cast<double>(f.snapshot->podCount()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_InterPodAntiAffinity(benchmark::State& s) {
  runPlugin(s, policyFor("RemovePodsViolatingInterPodAntiAffinity", "deschedule", ""));
}
void BM_NodeAffinity(benchmark::State& s) {
  runPlugin(s, policyFor("RemovePodsViolatingNodeAffinity", "deschedule",
                         "    args: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]}\n"));
}
void BM_LowNodeUtilization(benchmark::State& s) {
  runPlugin(s, policyFor("LowNodeUtilization", "balance",
                         "    args: {thresholds: {cpu: 20, memory: 20, pods: 20}, targetThresholds: {cpu: 60, memory: "
                         "60, pods: 60}}\n"));
}
void BM_LowNodeUtilizationUsage(benchmark::State& s) {
  runPlugin(s,
            policyFor("LowNodeUtilization", "balance",
                      "    args: {thresholds: {cpu: 20, memory: 20, pods: 20}, targetThresholds: {cpu: 60, memory: "
                      "60, pods: 60}, metricsUtilization: {source: KubernetesMetrics}}\n",
                      kMetricsServer),
            true);
}
void BM_LowNodeUtilizationPrometheus(benchmark::State& s) {
  runPlugin(
      s,
      policyFor("LowNodeUtilization", "balance",
                std::string("    args: {thresholds: {MetricResource: 20}, targetThresholds: {MetricResource: 60}, "
                            "metricsUtilization: {source: Prometheus, prometheus: {query: '") +
                    kPrometheusQuery + "'}}}\n",
                kPrometheus),
      true);
}
void BM_TopologySpread(benchmark::State& s) {
  runPlugin(s, policyFor("RemovePodsViolatingTopologySpreadConstraint", "balance", ""));
}
void BM_AllFour(benchmark::State& s) { runPlugin(s, allFourPolicy()); }
void BM_RemoveDuplicates(benchmark::State& s) { runPlugin(s, policyFor("RemoveDuplicates", "balance", "")); }
void BM_NodeTaints(benchmark::State& s) { runPlugin(s, policyFor("RemovePodsViolatingNodeTaints", "deschedule", "")); }
void BM_HighNodeUtilization(benchmark::State& s) {
  runPlugin(s, policyFor("HighNodeUtilization", "balance", "    args: {thresholds: {cpu: 20, memory: 20}}\n"));
}
void BM_HighNodeUtilizationUsage(benchmark::State& s) {
  runPlugin(
      s,
      policyFor("HighNodeUtilization", "balance",
                "    args: {thresholds: {cpu: 20, memory: 20}, metricsUtilization: {source: KubernetesMetrics}}\n",
                kMetricsServer),
      true);
}
void BM_PodLifeTime(benchmark::State& s) {
  runPlugin(s, policyFor("PodLifeTime", "deschedule", "    args: {maxPodLifeTimeSeconds: 86400, states: [Running]}\n"));
}
void BM_RemoveFailedPods(benchmark::State& s) {
  runPlugin(s, policyFor("RemoveFailedPods", "deschedule", "    args: {minPodLifetimeSeconds: 3600}\n"));
}
void BM_TooManyRestarts(benchmark::State& s) {
  runPlugin(s, policyFor("RemovePodsHavingTooManyRestarts", "deschedule",
                         "    args: {podRestartThreshold: 100, includingInitContainers: true}\n"));
}
void BM_AllEleven(benchmark::State& s) { runPlugin(s, allElevenPolicy()); }

void decodeBench(benchmark::State& state, bool wire) {
  bench::GenOptions o = sized(static_cast<int>(state.range(0)));
  o.wire = wire;
  std::string json = bench::generateSnapshotJson(o);
  for (auto _ : state) {
    cluster::Store store;
    auto r = cluster::loadSnapshot(json, "generated", store);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(json.size()));
  state.counters["bytes_per_pod"] = static_cast<double>(json.size()) / static_cast<double>(o.pods);
}
void BM_DecodeSnapshot(benchmark::State& s) { decodeBench(s, false); }
void BM_DecodeWire(benchmark::State& s) { decodeBench(s, true); }

#define SIZES ->Arg(3000)->Arg(30000)->Arg(150000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_TriggeredRun)->ArgsProduct({{3000, 30000, 150000}, {1, 10, 100, 1000}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InterPodAntiAffinity) SIZES;
BENCHMARK(BM_NodeAffinity) SIZES;
BENCHMARK(BM_LowNodeUtilization) SIZES;
BENCHMARK(BM_LowNodeUtilizationUsage) SIZES;
BENCHMARK(BM_LowNodeUtilizationPrometheus) SIZES;
BENCHMARK(BM_TopologySpread) SIZES;
BENCHMARK(BM_AllFour) SIZES;
BENCHMARK(BM_RemoveDuplicates) SIZES;
BENCHMARK(BM_NodeTaints) SIZES;
BENCHMARK(BM_HighNodeUtilization) SIZES;
BENCHMARK(BM_HighNodeUtilizationUsage) SIZES;
BENCHMARK(BM_PodLifeTime) SIZES;
BENCHMARK(BM_RemoveFailedPods) SIZES;
BENCHMARK(BM_TooManyRestarts) SIZES;
BENCHMARK(BM_AllEleven) SIZES;
BENCHMARK(BM_MakeRoomForPendingPods) SIZES;
BENCHMARK(BM_DecodeSnapshot) SIZES;
BENCHMARK(BM_DecodeWire) SIZES;

// ---- --engine mode ----------------------------------------------------------------------------

struct Clock {
  std::chrono::steady_clock::time_point wall;
  double cpu;
};
double threadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
Clock now() { return {std::chrono::steady_clock::now(), threadCpu()}; }
double wallSince(const Clock& c) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - c.wall).count();
}
double cpuSince(const Clock& c) { return threadCpu() - c.cpu; }

long long heapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<long long>(mi.uordblks + mi.hblkhd);
}
long long statusKb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::atoll(line.c_str() + std::strlen(key));
  return -1;
}

Result<std::string> readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error("cannot read " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct EngineArgs {
  std::string snapshot, policy, prometheusResult;
  int cycles = 5;
};

// What one --engine run measured.
struct EngineRun {
  std::size_t bytes = 0, pods = 0, nodes = 0, pdbs = 0;
  double readSeconds = 0, decodeWall = 0, decodeCpu = 0, snapWall = 0, snapCpu = 0;
  long long heapCache = 0, rss0 = 0, rss1 = 0;
  bool podConditionsKept = true;             // what the daemon's cache would keep with this policy
  std::optional<usage::ClusterUsage> usage;  // when the policy balances by usage
  long long usageHeap = 0;
  std::vector<double> walls, cpus;
  std::size_t evictions = 0, refused = 0;
  std::map<std::string, double> pluginSeconds;
  std::map<std::string, std::string> pluginErrors;
};

// The usage `kdesched plan` runs with, built as it builds it (the loader's NodeMetrics and
// PodMetrics, then plan::planUsage), from a second decode of the snapshot into a store thrown away
// inside the measurement: the mallinfo2 delta is what the usage keeps.
Status buildUsage(const std::string& text, const EngineArgs& a, const usage::Needs& needs, EngineRun& run) {
  malloc_trim(0);
  const long long heap0 = heapInUse();
  usage::SourceReadings metrics;
  {
    cluster::Store scratch;
    auto r = cluster::loadSnapshot(text, a.snapshot, scratch, &metrics);
    if (!r.isOk()) return r.status();
  }
  std::vector<std::string> notes;
  std::optional<api::Timestamp> now;  // judged as of the newest sample, as `kdesched plan` without --now
  auto built = plan::planUsage({std::move(metrics), a.snapshot, a.prometheusResult, now}, needs, notes);
  if (!built.isOk()) return built.status();
  run.usage = std::move(*built);
  run.usageHeap = heapInUse() - heap0;
  return Status::ok();
}

Status decodeInto(const std::string& text, const EngineArgs& a, cluster::Store& store, cluster::SnapshotPtr& snapshot,
                  EngineRun& run) {
  malloc_trim(0);
  const long long heap0 = heapInUse();
  run.rss0 = statusKb("VmRSS:");
  Clock t = now();
  auto report = cluster::loadSnapshot(text, a.snapshot, store);
  run.decodeWall = wallSince(t);
  run.decodeCpu = cpuSince(t);
  if (!report.isOk()) return report.status();
  t = now();
  snapshot = store.snapshot();
  run.snapWall = wallSince(t);
  run.snapCpu = cpuSince(t);
  run.heapCache = heapInUse() - heap0;
  run.bytes = text.size();
  run.pods = snapshot->podCount();
  run.nodes = snapshot->nodes().size();
  run.pdbs = snapshot->pdbs().size();
  return Status::ok();
}

void runCycles(const engine::Engine& engine, const cluster::Snapshot& snapshot, int cycles, EngineRun& run) {
  for (int i = 0; i < std::max(1, cycles); ++i) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine.limits(), sink);
    Clock t = now();
    framework::CycleResult r = engine.runCycle(snapshot, chain, nullptr, {}, run.usage ? &*run.usage : nullptr);
    run.walls.push_back(wallSince(t));
    run.cpus.push_back(cpuSince(t));
    run.evictions = sink.evictions().size();
    run.refused = sink.refusals().size();
    for (const auto& p : r.runs) {
      run.pluginSeconds[p.plugin] = i == 0 ? p.seconds : std::min(run.pluginSeconds[p.plugin], p.seconds);
      if (!p.status.isOk()) run.pluginErrors[p.plugin] = p.status.message();
    }
  }
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

void printRun(const EngineArgs& a, const EngineRun& r) {
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double pods = static_cast<double>(r.pods);
  std::cout.setf(std::ios::fixed);
  std::cout.precision(6);
  std::cout << "{\"snapshot\":" << jsonString(a.snapshot) << ",\"policy\":" << jsonString(a.policy)
            << ",\"bytes\":" << r.bytes << ",\"pods\":" << r.pods << ",\"nodes\":" << r.nodes << ",\"pdbs\":" << r.pdbs
            << ",\"read_seconds\":" << r.readSeconds << ",\"decode_wall_seconds\":" << r.decodeWall
            << ",\"decode_cpu_seconds\":" << r.decodeCpu
            << ",\"decode_mb_per_s\":" << static_cast<double>(r.bytes) / 1e6 / r.decodeCpu
            << ",\"index_wall_seconds\":" << r.snapWall << ",\"index_cpu_seconds\":" << r.snapCpu
            << ",\"pod_conditions_kept\":" << (r.podConditionsKept ? "true" : "false")
            << ",\"heap_bytes_cache\":" << r.heapCache
            << ",\"heap_bytes_per_pod\":" << static_cast<double>(r.heapCache) / pods << ",\"rss_kb_before\":" << r.rss0
            << ",\"rss_kb_after\":" << r.rss1 << ",\"rss_bytes_per_pod\":"
            << static_cast<double>(r.rss1 - (r.rss0 - static_cast<long long>(r.bytes / 1024))) * 1024 / pods;
  if (r.usage) {
    const usage::SourceReadings* m = r.usage->kubernetesMetrics ? &*r.usage->kubernetesMetrics : nullptr;
    std::cout << ",\"usage_heap_bytes\":" << r.usageHeap
              << ",\"usage_heap_bytes_per_pod\":" << static_cast<double>(r.usageHeap) / pods
              << ",\"usage_node_samples\":" << (m ? m->nodes.size() : 0)
              << ",\"usage_pod_samples\":" << (m ? m->pods.size() : 0)
              << ",\"usage_prometheus_queries\":" << r.usage->prometheus.size();
  }
  std::cout << ",\"cycles\":" << r.walls.size() << ",\"cycle_first_wall_seconds\":" << r.walls.front()
            << ",\"cycle_first_cpu_seconds\":" << r.cpus.front() << ",\"cycle_median_wall_seconds\":" << median(r.walls)
            << ",\"cycle_median_cpu_seconds\":" << median(r.cpus)
            << ",\"cycle_min_cpu_seconds\":" << *std::min_element(r.cpus.begin(), r.cpus.end())
            << ",\"evictions\":" << r.evictions << ",\"refused\":" << r.refused << ",\"plugin_min_seconds\":{";
  bool first = true;
  for (const auto& [name, sec] : r.pluginSeconds) {
    std::cout << (first ? "" : ",") << jsonString(name) << ":" << sec;
    first = false;
  }
  std::cout << "},\"plugin_errors\":{";
  first = true;
  for (const auto& [name, error] : r.pluginErrors) {
    std::cout << (first ? "" : ",") << jsonString(name) << ":" << jsonString(error);
    first = false;
  }
  std::cout << "},\"vm_hwm_kb\":" << statusKb("VmHWM:") << "}\n";
}

int engineMain(const EngineArgs& a) {
  EngineRun run;
  Clock t = now();
  auto text = readFile(a.snapshot);
  if (!text.isOk()) {
    std::cerr << "plugins_bench: " << text.error() << "\n";
    return 2;
  }
  run.readSeconds = wallSince(t);
  cluster::Store store;
  // The daemon's cache keeps pod conditions only when a plugin reads them, and learns that from the
  // policy before its caches fill; so does this cache. The policy is built once first for that
  // question alone (priority classes are not known before the decode: any value answers it).
  {
    framework::BuildContext probe;
    probe.priorityClassValue = [](const std::string&) -> Result<std::int32_t> { return 0; };
    probe.now = framework::WallSeconds::pinned(1800000000);
    if (auto e = engine::buildEngine(a.policy, probe); e.isOk()) run.podConditionsKept = e->readsPodConditions();
  }
  store.keepPodConditions(run.podConditionsKept);
  cluster::SnapshotPtr snapshot;
  if (Status st = decodeInto(*text, a, store, snapshot, run); !st.isOk()) {
    std::cerr << "plugins_bench: " << st.message() << "\n";
    return 2;
  }
  framework::BuildContext ctx;
  ctx.priorityClassValue = [snapshot](const std::string& name) -> Result<std::int32_t> {
    if (const api::PriorityClass* pc = snapshot->priorityClass(name)) return pc->value;
    return Status::error("no PriorityClass " + name);
  };
  ctx.now = framework::WallSeconds::pinned(1800000000);
  auto engine = engine::buildEngine(a.policy, ctx);
  if (!engine.isOk()) {
    std::cerr << "plugins_bench: " << engine.error() << "\n";
    return 2;
  }
  if (usage::Needs needs = engine->usageNeeds(); !needs.empty()) {
    if (Status st = buildUsage(*text, a, needs, run); !st.isOk()) {
      std::cerr << "plugins_bench: " << st.message() << "\n";
      return 2;
    }
  }
  text->clear();
  text->shrink_to_fit();
  malloc_trim(0);
  run.rss1 = statusKb("VmRSS:");
  runCycles(*engine, *snapshot, a.cycles, run);
  printRun(a, run);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--engine") {
    EngineArgs a;
    for (int i = 2; i + 1 < argc; i += 2) {
      std::string k = argv[i], v = argv[i + 1];
      if (k == "--snapshot")
        a.snapshot = v;
      else if (k == "--policy")
        a.policy = v;
      else if (k == "--cycles")
        a.cycles = std::atoi(v.c_str());
      else if (k == "--prometheus-result")
        a.prometheusResult = v;
      else {
        std::cerr << "plugins_bench --engine: unknown option " << k << "\n";
        return 2;
      }
    }
    if (a.snapshot.empty() || a.policy.empty()) {
      std::cerr << "usage: plugins_bench --engine --snapshot FILE --policy FILE [--cycles N] [--prometheus-result "
                   "FILE]\n";
      return 2;
    }
    return engineMain(a);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
