// Per-plugin micro-benchmarks on generated clusters (3k, 30k, 150k pods): one cycle of one plugin
// through the real engine and evictor with the plan sink. Reported per pod, so near-linear growth
// shows as a flat ns/pod across sizes. BM_AllFour runs the four strategies together (the engine
// benchmark's policy), BM_AllEleven every plugin in one profile; BM_DecodeSnapshot / BM_DecodeWire measure JSON → store
// throughput on the compact and on API-server-shaped (~4 KB/pod) objects.
//
// Second mode, used by bench/run.sh engine (one process per size, so peak RSS is per size):
//   plugins_bench --engine --snapshot FILE --policy FILE [--cycles N]
// reads the file, decodes it into a Store, builds the indexed snapshot and runs N cycles, and
// prints one JSON line: decode and cycle wall and thread-CPU seconds, MB/s, heap bytes in use per
// cached pod (mallinfo2 delta over decode + snapshot, the allocator's own count) and RSS.
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
#include "pkg/plan/engine.h"

namespace {

using namespace kdesched;

struct Fixture {
  cluster::Store store;
  cluster::SnapshotPtr snapshot;
};

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
    auto r = cluster::loadSnapshot(bench::generateSnapshotJson(sized(pods)), "generated", f->store);
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

std::string policyFor(const std::string& plugin, const std::string& point, const std::string& args) {
  return "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: bench\n  pluginConfig:\n"
         "  - name: DefaultEvictor\n    args: {nodeFit: true}\n  - name: " +
         plugin + "\n" + args + "  plugins:\n    " + point + ":\n      enabled: [" + plugin + "]\n";
}

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

void runPlugin(benchmark::State& state, const std::string& policyYaml) {
  const Fixture& f = fixture(static_cast<int>(state.range(0)));
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(1800000000);
  ctx.priorityClassValue = [&f](const std::string& name) -> Result<std::int32_t> {
    if (const api::PriorityClass* pc = f.snapshot->priorityClass(name)) return pc->value;
    return Status::error("no PriorityClass " + name);
  };
  auto engine = plan::buildEngineFromText(policyYaml, "bench.yaml", ctx);
  if (!engine.isOk()) {
    state.SkipWithError(engine.error().c_str());
    return;
  }
  std::size_t evicted = 0;
  for (auto _ : state) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    engine->runCycle(*f.snapshot, chain);
    evicted = sink.evictions().size();
    benchmark::DoNotOptimize(evicted);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(f.snapshot->podCount()));
  state.counters["pods"] = static_cast<double>(f.snapshot->podCount());
  state.counters["evicted"] = static_cast<double>(evicted);
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
void BM_TopologySpread(benchmark::State& s) {
  runPlugin(s, policyFor("RemovePodsViolatingTopologySpreadConstraint", "balance", ""));
}
void BM_AllFour(benchmark::State& s) { runPlugin(s, allFourPolicy()); }
void BM_RemoveDuplicates(benchmark::State& s) { runPlugin(s, policyFor("RemoveDuplicates", "balance", "")); }
void BM_NodeTaints(benchmark::State& s) { runPlugin(s, policyFor("RemovePodsViolatingNodeTaints", "deschedule", "")); }
void BM_HighNodeUtilization(benchmark::State& s) {
  runPlugin(s, policyFor("HighNodeUtilization", "balance", "    args: {thresholds: {cpu: 20, memory: 20}}\n"));
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
BENCHMARK(BM_InterPodAntiAffinity) SIZES;
BENCHMARK(BM_NodeAffinity) SIZES;
BENCHMARK(BM_LowNodeUtilization) SIZES;
BENCHMARK(BM_TopologySpread) SIZES;
BENCHMARK(BM_AllFour) SIZES;
BENCHMARK(BM_RemoveDuplicates) SIZES;
BENCHMARK(BM_NodeTaints) SIZES;
BENCHMARK(BM_HighNodeUtilization) SIZES;
BENCHMARK(BM_PodLifeTime) SIZES;
BENCHMARK(BM_RemoveFailedPods) SIZES;
BENCHMARK(BM_TooManyRestarts) SIZES;
BENCHMARK(BM_AllEleven) SIZES;
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

int engineMain(const std::string& snapshotPath, const std::string& policyPath, int cycles) {
  Clock t = now();
  std::string text;
  {
    std::ifstream f(snapshotPath, std::ios::binary);
    if (!f) {
      std::cerr << "plugins_bench: cannot read " << snapshotPath << "\n";
      return 2;
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  double readSeconds = wallSince(t);
  malloc_trim(0);
  long long heap0 = heapInUse();
  long long rss0 = statusKb("VmRSS:");

  cluster::Store store;
  t = now();
  auto report = cluster::loadSnapshot(text, snapshotPath, store);
  double decodeWall = wallSince(t), decodeCpu = cpuSince(t);
  if (!report.isOk()) {
    std::cerr << "plugins_bench: " << report.error() << "\n";
    return 2;
  }
  t = now();
  cluster::SnapshotPtr snapshot = store.snapshot();
  double snapWall = wallSince(t), snapCpu = cpuSince(t);
  long long heap1 = heapInUse();
  std::size_t bytes = text.size();
  text.clear();
  text.shrink_to_fit();
  malloc_trim(0);
  long long rss1 = statusKb("VmRSS:");

  framework::BuildContext ctx;
  ctx.priorityClassValue = [snapshot](const std::string& name) -> Result<std::int32_t> {
    if (const api::PriorityClass* pc = snapshot->priorityClass(name)) return pc->value;
    return Status::error("no PriorityClass " + name);
  };
  ctx.now = framework::WallSeconds::pinned(1800000000);
  auto engine = plan::buildEngine(policyPath, ctx);
  if (!engine.isOk()) {
    std::cerr << "plugins_bench: " << engine.error() << "\n";
    return 2;
  }
  std::vector<double> walls, cpus;
  std::size_t evictions = 0, refused = 0;
  std::map<std::string, double> pluginSeconds;
  for (int i = 0; i < std::max(1, cycles); ++i) {
    evictor::PlanSink sink;
    evictor::EvictionChain chain(engine->limits(), sink);
    t = now();
    framework::CycleResult r = engine->runCycle(*snapshot, chain);
    walls.push_back(wallSince(t));
    cpus.push_back(cpuSince(t));
    evictions = sink.evictions().size();
    refused = sink.refusals().size();
    for (const auto& run : r.runs)
      pluginSeconds[run.plugin] = i == 0 ? run.seconds : std::min(pluginSeconds[run.plugin], run.seconds);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double pods = static_cast<double>(snapshot->podCount());
  std::cout.setf(std::ios::fixed);
  std::cout.precision(6);
  std::cout << "{\"snapshot\":\"" << snapshotPath << "\",\"bytes\":" << bytes << ",\"pods\":" << snapshot->podCount()
            << ",\"nodes\":" << snapshot->nodes().size() << ",\"pdbs\":" << snapshot->pdbs().size()
            << ",\"read_seconds\":" << readSeconds << ",\"decode_wall_seconds\":" << decodeWall
            << ",\"decode_cpu_seconds\":" << decodeCpu
            << ",\"decode_mb_per_s\":" << static_cast<double>(bytes) / 1e6 / decodeCpu
            << ",\"index_wall_seconds\":" << snapWall << ",\"index_cpu_seconds\":" << snapCpu
            << ",\"heap_bytes_cache\":" << heap1 - heap0
            << ",\"heap_bytes_per_pod\":" << static_cast<double>(heap1 - heap0) / pods << ",\"rss_kb_before\":" << rss0
            << ",\"rss_kb_after\":" << rss1 << ",\"rss_bytes_per_pod\":"
            << static_cast<double>(rss1 - (rss0 - static_cast<long long>(bytes / 1024))) * 1024 / pods
            << ",\"cycles\":" << walls.size() << ",\"cycle_first_wall_seconds\":" << walls.front()
            << ",\"cycle_first_cpu_seconds\":" << cpus.front() << ",\"cycle_median_wall_seconds\":" << median(walls)
            << ",\"cycle_median_cpu_seconds\":" << median(cpus)
            << ",\"cycle_min_cpu_seconds\":" << *std::min_element(cpus.begin(), cpus.end())
            << ",\"evictions\":" << evictions << ",\"refused\":" << refused << ",\"plugin_min_seconds\":{";
  bool first = true;
  for (const auto& [name, s] : pluginSeconds) {
    std::cout << (first ? "" : ",") << "\"" << name << "\":" << s;
    first = false;
  }
  std::cout << "},\"vm_hwm_kb\":" << statusKb("VmHWM:") << "}\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--engine") {
    std::string snapshot, policy;
    int cycles = 5;
    for (int i = 2; i + 1 < argc; i += 2) {
      std::string k = argv[i], v = argv[i + 1];
      if (k == "--snapshot")
        snapshot = v;
      else if (k == "--policy")
        policy = v;
      else if (k == "--cycles")
        cycles = std::atoi(v.c_str());
      else {
        std::cerr << "plugins_bench --engine: unknown option " << k << "\n";
        return 2;
      }
    }
    if (snapshot.empty() || policy.empty()) {
      std::cerr << "usage: plugins_bench --engine --snapshot FILE --policy FILE [--cycles N]\n";
      return 2;
    }
    return engineMain(snapshot, policy, cycles);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
