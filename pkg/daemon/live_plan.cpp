#include "pkg/daemon/live_plan.h"

#include "pkg/kube/eviction_api.h"
#include "pkg/moves/advisor.h"

#include <map>

#include "pkg/cluster/loader.h"
#include "pkg/daemon/daemon.h"
#include "pkg/daemon/metrics_server_collector.h"
#include "pkg/daemon/runtime.h"
#include "pkg/kube/resources.h"
#include "pkg/kube/wire.h"
#include "pkg/usage/decode.h"

namespace kdesched::daemon {
namespace {

// The objects of more than this many undecodable ones are counted, not named.
constexpr std::size_t kUndecodableNamed = 5;

// What a live plan read: the objects as the daemon's decoder made them, in the order read (the
// order the saved snapshot holds them in), the report a snapshot loader would give for them, and,
// when saving, every answer as the API server sent it.
struct ClusterRead {
  bool keepAnswers = false;
  std::vector<std::string> answers;
  std::vector<api::Object> objects;
  std::vector<std::string> undecodable;  // "pods default/web: spec...: invalid quantity ..."
  std::size_t undecodableCount = 0;
  cluster::LoadReport report;
  usage::SourceReadings metrics;
  std::map<std::string, std::int32_t> priorityClasses;  // read once each, by name
};

LivePlanFailure clusterFailure(std::string message) { return {kExitFailure, std::move(message)}; }

std::string listFailed(const kube::Resource& r, const kube::ApiError& e) {
  std::string out = "cannot list " + std::string(r.name) + ": " + e.describe();
  if (e.code == 401 || e.code == 403)
    out += " (grant list on " + std::string(r.name) + " to this identity; the chart's ClusterRole has it)";
  return out;
}

// Every page of one cached resource, as a one-shot reflector lists it: Client::listPages with the
// newest state in pages of 500, each page decoded by kube::decodeListPage.
std::optional<LivePlanFailure> listResource(kube::Client& client, const kube::Resource& r, ClusterRead& read) {
  kube::ListPage page;
  std::vector<std::string> answers;
  kube::PageReader reader;
  reader.decode = [&](std::string& body, std::string& continueToken) {
    if (read.keepAnswers) answers.push_back(body);
    page.continueToken.clear();
    KD_TRY(kube::decodeListPage(r.kind, body, page));
    continueToken = page.continueToken;
    return Status::ok();
  };
  reader.restart = [&] {
    page = kube::ListPage{};
    answers.clear();
  };
  auto listed = client.listPages(r.path, r.name, kube::ListOptions{}, reader);
  if (!listed.isOk()) return clusterFailure(listFailed(r, listed.error()));
  for (auto& a : answers) read.answers.push_back(std::move(a));
  if (!page.objects.empty()) read.report.loaded[std::string(api::toString(r.kind))] += page.objects.size();
  for (auto& o : page.objects) read.objects.push_back(std::move(o));
  for (const auto& u : page.undecodable) {
    if (read.undecodable.size() < kUndecodableNamed)
      read.undecodable.push_back(std::string(r.name) + " " + (u.key.empty() ? "(no name)" : u.key) + ": " + u.error);
    ++read.undecodableCount;
  }
  return std::nullopt;
}

// One metrics.k8s.io LIST, by the collector's decoder, into read.metrics.
std::optional<LivePlanFailure> listMetrics(kube::Client& client, std::string_view path, std::string_view name,
                                           const char* kind, ClusterRead& read) {
  usage::SourceReadings got;
  std::vector<std::string> answers;
  std::size_t items = 0;
  kube::PageReader reader;
  reader.decode = [&](std::string& body, std::string& continueToken) {
    if (read.keepAnswers) answers.push_back(body);
    return usage::addMetricsList(body, got, nullptr, &continueToken, &items);
  };
  reader.restart = [&] {
    got = usage::SourceReadings{};
    answers.clear();
    items = 0;
  };
  auto listed = client.listPages(path, name, kube::ListOptions{}, reader);
  if (!listed.isOk()) return clusterFailure(describeMetricsListError(std::string(kind) + " list", listed.error()));
  for (auto& a : answers) read.answers.push_back(std::move(a));
  if (items) read.report.loaded[kind] += items;
  for (auto& [node, sample] : got.nodes) read.metrics.nodes[node] = sample;
  // PodMetrics come in one list: the table is that list's.
  if (!got.pods.empty() || got.podsTakenAt) {
    read.metrics.pods = std::move(got.pods);
    read.metrics.podsTakenAt = got.podsTakenAt;
  }
  for (auto& n : got.notes) read.metrics.notes.push_back(std::move(n));
  return std::nullopt;
}

// The policy's PriorityClasses (DefaultEvictor's priorityThreshold.name) by GET, as the daemon
// reads them; each is kept as an object of the state, as a snapshot holding it would be.
framework::BuildContext buildContext(kube::Client& client, api::Timestamp now, ClusterRead& read) {
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(now);
  ctx.priorityClassValue = [&client, &read](const std::string& name) -> Result<std::int32_t> {
    if (auto it = read.priorityClasses.find(name); it != read.priorityClasses.end()) return it->second;
    auto pc = getPriorityClass(client, name);
    if (!pc.isOk()) return pc.status();
    read.priorityClasses.emplace(name, pc->object.value);
    ++read.report.loaded["PriorityClass"];
    if (read.keepAnswers) read.answers.push_back(std::move(pc->body));
    const std::int32_t value = pc->object.value;
    read.objects.push_back(std::move(pc->object));
    return value;
  };
  return ctx;
}

std::optional<LivePlanFailure> readCluster(kube::Client& client, const engine::Engine& engine, ClusterRead& read) {
  for (const kube::Resource& r : kube::kCachedResources)
    if (auto failed = listResource(client, r, read)) return failed;
  if (engine.usageNeeds().kubernetesMetrics()) {
    if (auto failed = listMetrics(client, kNodeMetricsPath, "nodemetrics", "NodeMetrics", read)) return failed;
    if (auto failed = listMetrics(client, kPodMetricsPath, "podmetrics", "PodMetrics", read)) return failed;
    read.metrics.pods.finish();
  }
  return std::nullopt;
}

void writeAnswers(const ClusterRead& read, std::ostream& save) {
  for (const std::string& a : read.answers) {
    save << a;
    if (a.empty() || a.back() != '\n') save << '\n';
  }
  save.flush();
}

}  // namespace

std::optional<LivePlanFailure> runLivePlan(kube::Client& client, const plan::PlanOptions& options,
                                           api::Timestamp readAt, std::ostream& out, std::ostream* save) {
  ClusterRead read;
  read.keepAnswers = save != nullptr;
  // The policy first: its PriorityClass is read as it is built, and what it balances by says
  // whether metrics.k8s.io is read at all.
  const framework::BuildContext ctx = buildContext(client, options.now.value_or(readAt), read);
  auto engine = options.policyYaml.empty() ? engine::buildEngine(options.policyPath, ctx)
                                           : engine::buildEngineFromText(options.policyYaml, options.policyPath, ctx);
  if (!engine.isOk()) return LivePlanFailure{kExitBadInput, engine.error()};
  if (auto failed = readCluster(client, *engine, read)) return failed;
  if (save) {
    writeAnswers(read, *save);
    if (!*save) return LivePlanFailure{kExitBadInput, "--save-snapshot: cannot write the snapshot"};
  }
  if (read.undecodableCount) {
    std::string named;
    for (const auto& u : read.undecodable) named += (named.empty() ? "" : "; ") + u;
    if (read.undecodableCount > read.undecodable.size())
      named += "; and " + std::to_string(read.undecodableCount - read.undecodable.size()) + " more";
    return clusterFailure("the cluster holds objects kdesched cannot decode, and no plan decides without them: " +
                          named);
  }

  plan::PlanInput input;
  cluster::notePodsOnUnknownNodes(read.objects, read.report);
  cluster::Store store;
  for (auto& o : read.objects) store.upsert(std::move(o));
  input.snapshot = store.snapshot();
  input.report = std::move(read.report);
  input.metrics = std::move(read.metrics);
  input.sourceName = "the API server";
  input.live = true;
  // Moves read the Deployment of each candidate as the daemon would (GETs only; nothing is written).
  kube::KubeEvictionApi reads(client, systemClock());
  moves::ApiWorkloads workloads(reads);
  input.workloads = &workloads;
  plan::PlanOptions pinned = options;
  pinned.now = options.now.value_or(readAt);
  if (Status st = plan::writePlan(*engine, std::move(input), pinned, out); !st.isOk())
    return LivePlanFailure{kExitBadInput, st.message()};
  return std::nullopt;
}

}  // namespace kdesched::daemon
