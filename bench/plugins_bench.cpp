// Per-plugin micro-benchmarks on generated clusters (3k, 30k, 150k pods): one cycle of one plugin
// through the real engine and evictor with the plan sink. Reported per pod, so near-linear growth
// shows as a flat ns/pod across sizes.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "bench/cluster_gen.h"
#include "pkg/cluster/loader.h"
#include "pkg/plan/engine.h"

namespace {

using namespace kdesched;

struct Fixture {
  cluster::Store store;
  cluster::SnapshotPtr snapshot;
};

const Fixture& fixture(int pods) {
  static std::map<int, std::unique_ptr<Fixture>> cache;
  auto& f = cache[pods];
  if (!f) {
    f = std::make_unique<Fixture>();
    bench::GenOptions o;
    o.pods = pods;
    o.nodes = std::max(10, pods / 30);
    auto r = cluster::loadSnapshot(bench::generateSnapshotJson(o), "generated", f->store);
    if (!r.isOk()) throw std::runtime_error(r.error());
    f->snapshot = f->store.snapshot();
  }
  return *f;
}

std::string policyFor(const std::string& plugin, const std::string& point, const std::string& args) {
  return "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: bench\n  pluginConfig:\n"
         "  - name: DefaultEvictor\n    args: {nodeFit: true}\n  - name: " + plugin + "\n" + args +
         "  plugins:\n    " + point + ":\n      enabled: [" + plugin + "]\n";
}

void runPlugin(benchmark::State& state, const std::string& policyYaml) {
  const Fixture& f = fixture(static_cast<int>(state.range(0)));
  framework::BuildContext ctx;
  ctx.now = [] { return api::Timestamp(1800000000); };
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
  state.counters["ns_per_pod"] = benchmark::Counter(static_cast<double>(f.snapshot->podCount()),
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
                         "    args: {thresholds: {cpu: 20, memory: 20, pods: 20}, targetThresholds: {cpu: 50, memory: 50, pods: 50}}\n"));
}
void BM_TopologySpread(benchmark::State& s) {
  runPlugin(s, policyFor("RemovePodsViolatingTopologySpreadConstraint", "balance", ""));
}

void BM_DecodeSnapshot(benchmark::State& state) {
  bench::GenOptions o;
  o.pods = static_cast<int>(state.range(0));
  o.nodes = std::max(10, o.pods / 30);
  std::string json = bench::generateSnapshotJson(o);
  for (auto _ : state) {
    cluster::Store store;
    auto r = cluster::loadSnapshot(json, "generated", store);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(json.size()));
}

#define SIZES ->Arg(3000)->Arg(30000)->Arg(150000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_InterPodAntiAffinity) SIZES;
BENCHMARK(BM_NodeAffinity) SIZES;
BENCHMARK(BM_LowNodeUtilization) SIZES;
BENCHMARK(BM_TopologySpread) SIZES;
BENCHMARK(BM_DecodeSnapshot) SIZES;

}  // namespace

BENCHMARK_MAIN();
