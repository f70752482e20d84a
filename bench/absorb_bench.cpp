// Event absorption: how many pod watch events per second one core turns into
// cache state and trigger seeds, the daemon's path for each line of a pods watch.
//
// The cache holds a generated cluster of API-server-shaped objects (bench/cluster_gen --wire:
// managedFields, status, ~4 KB per pod). The stream is a churn mix over those pods, as
// `kubectl get --raw '/api/v1/pods?watch=1'` prints it, one JSON object per line ("type" first, as
// the API server writes it), in every ten changes:
//   7 MODIFIED status updates (a new resourceVersion, a condition's time: the commonest event),
//   2 MODIFIED relabels (a new label value: placement rules may break),
//   1 DELETED followed by ADDED of the same pod (a replacement; two events),
// so by events 64% status, 18% relabels, 18% deletes and adds. The stream is replayed in a loop;
// its two halves give each relabelled pod two different values, so a relabel is a change on
// every pass.
// Three levels, so the cost of each step shows:
//   BM_Decode          decodeWatchEvent alone (simdjson on-demand into a compact api::Pod);
//   BM_DecodeStore     + Store::upsert/remove, as Reflector::apply does (not its resourceVersion
//                      bookkeeping and metrics observer);
//   BM_DecodeStoreMap  + the store listener classifying each change into trigger seeds
//                      (TriggerSchedule::onEvent, every plugin interested), the seeds taken every
//                      1,000 events as the batch window would (not the lock of TriggeredRuns, deadline
//                      queue and anti-flapping bookkeeping around it).
//   BM_DecodeStoreMapIndexed  the same with the store's pod indexes kept up to date (a snapshot
//                      taken first and with each batch of seeds), as in a daemon.
// BM_SnapshotAfterEvent: one event, then a snapshot (what a triggered run takes).
// BM_MallocTrimAfterChurn: what the daemon's malloc_trim(0) after a periodic cycle costs.
// And BM_FreshLabelValues: relabels only, each with a value never seen before (a rollout's
// pod-template-hash, a Job's controller-uid, a counter), decoded into the store; its counter
// heap_bytes_per_event is the heap (mallinfo2) the process keeps per event once the pods that
// carried the old values are replaced: what a long-running daemon grows by under such churn.
// items_per_second is events per second. Run pinned to one core (bench/run.sh's absorb part):
//   taskset -c 0 build-bench/absorb_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/cluster_gen.h"
#include "pkg/api/decode.h"
#include "pkg/cluster/loader.h"
#include "pkg/cluster/store.h"
#include "pkg/kube/wire.h"
#include "pkg/trigger/schedule.h"

namespace kdesched {
namespace {

constexpr int kPods = 30000;  // S2
constexpr int kNodes = 1000;
constexpr std::size_t kChanges = 10000;  // changes per half of the stream, replayed in a loop

struct Fixture {
  std::string snapshot;            // the initial cluster, a v1 List
  std::vector<std::string> lines;  // the churn stream
  std::size_t bytes = 0;
};

// nlohmann::json orders keys by name ("object" before "type"); the API server writes "type" first,
// which is the decoder's fast path.
std::string line(const char* type, const nlohmann::json& pod) {
  return std::string(R"({"type":")") + type + R"(","object":)" + pod.dump() + "}";
}

Fixture makeFixture() {
  Fixture f;
  bench::GenOptions o;
  o.pods = kPods;
  o.nodes = kNodes;
  o.namespaces = kPods / 100;
  o.wire = true;
  f.snapshot = bench::generateSnapshotJson(o);
  const auto list = nlohmann::json::parse(f.snapshot);
  std::vector<const nlohmann::json*> pods;
  for (const auto& item : list.at("items"))
    if (item.value("kind", "") == "Pod") pods.push_back(&item);
  long long rv = 1000000;
  for (std::size_t i = 0; i < 2 * kChanges; ++i) {
    nlohmann::json pod = *pods[((i % kChanges) * 7919) % pods.size()];  // a stride, so neighbours differ
    pod["metadata"]["resourceVersion"] = std::to_string(++rv);
    switch (i % 10) {
      case 7:
      case 8:
        pod["metadata"]["labels"]["churn"] = "v" + std::to_string(i);
        f.lines.push_back(line("MODIFIED", pod));
        break;
      case 9:
        f.lines.push_back(line("DELETED", pod));
        pod["metadata"]["resourceVersion"] = std::to_string(++rv);
        f.lines.push_back(line("ADDED", pod));
        break;
      default:
        if (pod.contains("status") && pod["status"].contains("conditions") && !pod["status"]["conditions"].empty())
          pod["status"]["conditions"][0]["lastProbeTime"] = "2026-12-03T00:00:" + std::to_string(10 + i % 50) + "Z";
        f.lines.push_back(line("MODIFIED", pod));
    }
  }
  for (const auto& l : f.lines) f.bytes += l.size();
  return f;
}

const Fixture& fixture() {
  static const Fixture f = makeFixture();
  return f;
}

enum class Level { Decode, Store, Map, Indexed };

void apply(cluster::Store& store, kube::WatchEvent& ev) {
  if (ev.type == kube::WatchEventType::Deleted) {
    if (const auto* pod = std::get_if<api::Pod>(&ev.object)) store.remove(api::Kind::Pod, cluster::objectKey(*pod));
  } else {
    store.upsert(std::move(ev.object));
  }
}

// Loads the fixture's S2 cluster into `store`; false (and the benchmark skipped) if it fails.
bool loadFixture(benchmark::State& state, cluster::Store& store) {
  auto loaded = cluster::loadSnapshot(fixture().snapshot, "generated", store);
  if (!loaded) state.SkipWithError(loaded.error().c_str());
  return static_cast<bool>(loaded);
}

void absorb(benchmark::State& state, Level level) {
  const Fixture& f = fixture();
  cluster::Store store;
  if (level != Level::Decode && !loadFixture(state, store)) return;
  trigger::TriggerSchedule schedule(policy::TriggerConfig{}, trigger::Interest{.podStatus = true});
  const Clock::TimePoint t0{};
  std::size_t mapped = 0, seen = 0;
  // Indexed: the store keeps its pod indexes up to date (as once a daemon took its first
  // snapshot), and a snapshot is taken with each batch of seeds, as a triggered run would.
  if (level == Level::Indexed) benchmark::DoNotOptimize(store.snapshot());
  cluster::Store::Subscription subscription;
  if (level == Level::Map || level == Level::Indexed)
    subscription = store.subscribe([&](const cluster::StoreEvent& e) {
      if (!schedule.onEvent(e, t0).empty()) ++mapped;
      if (++seen % 1000 == 0) {
        benchmark::DoNotOptimize(schedule.take(t0 + std::chrono::hours(1)));
        if (level == Level::Indexed) benchmark::DoNotOptimize(store.snapshot());
      }
    });
  api::JsonParser parser;
  kube::WatchEvent ev;
  std::string buf;
  std::size_t i = 0, failed = 0;
  for (auto _ : state) {
    buf = f.lines[i];  // the reflector's line buffer
    if (++i == f.lines.size()) i = 0;
    if (!kube::decodeWatchEvent(api::Kind::Pod, buf, parser, ev).isOk() || ev.undecodable) {
      ++failed;
      continue;
    }
    if (level != Level::Decode) apply(store, ev);
    benchmark::DoNotOptimize(ev);
  }
  if (failed) state.SkipWithError("events that did not decode");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["bytes_per_event"] = static_cast<double>(f.bytes) / static_cast<double>(f.lines.size());
  if (level != Level::Decode && level != Level::Store)
    state.counters["mapped_share"] = seen ? static_cast<double>(mapped) / seen : 0;
}

// A relabel line split around its label value: prefix + value + suffix is one MODIFIED event.
struct FreshLabelLine {
  std::string prefix, suffix;
};

std::vector<FreshLabelLine> freshLabelLines(const Fixture& f) {
  std::vector<FreshLabelLine> out;
  constexpr std::string_view kMark = "@FRESH@";
  for (std::size_t i = 0; i < f.lines.size() && out.size() < 1000; i += 10) {
    auto ev = nlohmann::json::parse(f.lines[i]);
    ev["object"]["metadata"]["labels"]["churn"] = std::string(kMark);
    const std::string text = line("MODIFIED", ev["object"]);
    const std::size_t at = text.find(kMark);
    out.push_back({text.substr(0, at), text.substr(at + kMark.size())});
  }
  return out;
}

void BM_FreshLabelValues(benchmark::State& state) {
  const Fixture& f = fixture();
  static const std::vector<FreshLabelLine> lines = freshLabelLines(f);
  cluster::Store store;
  if (!loadFixture(state, store)) return;
  api::JsonParser parser;
  kube::WatchEvent ev;
  std::string buf;
  static std::uint64_t n = 0;  // across repetitions too: a value is never seen twice
  auto relabel = [&] {
    const FreshLabelLine& l = lines[n % lines.size()];
    buf = l.prefix;
    buf += "fresh-" + std::to_string(n++);
    buf += l.suffix;
    if (kube::decodeWatchEvent(api::Kind::Pod, buf, parser, ev).isOk() && !ev.undecodable) apply(store, ev);
  };
  // Warm-up: every pod of the stream relabelled a few times, so what stays is growth, not first use.
  for (std::size_t i = 0; i < 20 * lines.size(); ++i) relabel();
  const auto heap0 = mallinfo2().uordblks;
  const std::uint64_t n0 = n;
  for (auto _ : state) relabel();
  const double events = static_cast<double>(n - n0);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["heap_bytes_per_event"] =
      events > 0 ? (static_cast<double>(mallinfo2().uordblks) - static_cast<double>(heap0)) / events : 0;
}

// A triggered run's snapshot: one watch event, then store.snapshot() (the timed part: the store
// lock is held for all of it, so it is also the longest a watch thread waits for a snapshot),
// the snapshot held until the next event as a run would hold it, so the event pays for the
// copies its change needs (counter apply_us).
void BM_SnapshotAfterEvent(benchmark::State& state) {
  const Fixture& f = fixture();
  cluster::Store store;
  if (!loadFixture(state, store)) return;
  cluster::SnapshotPtr held = store.snapshot();  // the first one builds the indexes
  api::JsonParser parser;
  kube::WatchEvent ev;
  std::string buf;
  std::size_t i = 0;
  double applied = 0;
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    buf = f.lines[i];
    if (++i == f.lines.size()) i = 0;
    const auto t0 = Clock::now();
    if (kube::decodeWatchEvent(api::Kind::Pod, buf, parser, ev).isOk() && !ev.undecodable) apply(store, ev);
    const auto t1 = Clock::now();
    held = store.snapshot();
    const auto t2 = Clock::now();
    applied += std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(std::chrono::duration<double>(t2 - t1).count());
  }
  state.counters["apply_us"] = state.iterations() ? applied * 1e6 / static_cast<double>(state.iterations()) : 0;
}

// The daemon's malloc_trim(0) after each periodic cycle (pkg/daemon/daemon.cpp): per iteration,
// 1,000 events of the churn decoded into the loaded S2 store with a snapshot taken (untimed), then
// the trim (timed: every arena's lock is held for it). Counter rss_mib: the process's RSS after it.
void BM_MallocTrimAfterChurn(benchmark::State& state) {
  const Fixture& f = fixture();
  cluster::Store store;
  if (!loadFixture(state, store)) return;
  benchmark::DoNotOptimize(store.snapshot());
  api::JsonParser parser;
  kube::WatchEvent ev;
  std::string buf;
  std::size_t i = 0;
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    for (int n = 0; n < 1000; ++n) {
      buf = f.lines[i];
      if (++i == f.lines.size()) i = 0;
      if (kube::decodeWatchEvent(api::Kind::Pod, buf, parser, ev).isOk() && !ev.undecodable) apply(store, ev);
    }
    benchmark::DoNotOptimize(store.snapshot());
    const auto t0 = Clock::now();
    malloc_trim(0);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  long pages = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    long size = 0;
    if (std::fscanf(statm, "%ld %ld", &size, &pages) != 2) pages = 0;
    std::fclose(statm);
  }
  state.counters["rss_mib"] =
      static_cast<double>(pages) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

void BM_Decode(benchmark::State& s) { absorb(s, Level::Decode); }
void BM_DecodeStore(benchmark::State& s) { absorb(s, Level::Store); }
void BM_DecodeStoreMap(benchmark::State& s) { absorb(s, Level::Map); }
void BM_DecodeStoreMapIndexed(benchmark::State& s) { absorb(s, Level::Indexed); }
BENCHMARK(BM_Decode)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeStore)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeStoreMap)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeStoreMapIndexed)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SnapshotAfterEvent)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FreshLabelValues)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MallocTrimAfterChurn)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(50);

}  // namespace
}  // namespace kdesched

BENCHMARK_MAIN();
