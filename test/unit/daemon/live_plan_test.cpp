// The live plan over a scripted API server: it reads what the daemon's one-shot reads, by GET
// only; its saved snapshot holds the answers as they came and, replayed by `plan --snapshot` at the
// read time, gives the same plan byte for byte (table and JSON; usage, PriorityClasses, a pod on a
// missing node, a list that restarted); what it cannot read is an error naming it.
#include "pkg/daemon/live_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pkg/api/timestamp.h"
#include "pkg/daemon/daemon.h"
#include "test/unit/daemon/usage_fakes.h"
#include "test/unit/testing/paths.h"

namespace kdesched::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using ::testing::HasSubstr;

const fs::path kSrc = kdesched::testing::sourceDir();

api::Timestamp at(const char* rfc3339) { return *api::parseTimestamp(rfc3339); }

// A cluster as the API server pages it: typed lists whose items carry no kind or apiVersion.
struct Cluster {
  std::map<std::string, std::vector<json>> items;  // by kind: "Pod", "NodeMetrics", ...

  // The objects of an example snapshot (every JSON document of the file, List or typed list).
  static Cluster fromSnapshot(const fs::path& file) {
    Cluster c;
    std::ifstream in(file);
    for (json doc; in >> std::ws && in.peek() != EOF;) {
      in >> doc;
      std::string listKind = doc.value("kind", "");
      std::string itemKind = listKind.size() > 4 && listKind != "List" ? listKind.substr(0, listKind.size() - 4) : "";
      for (json item : doc["items"]) {
        std::string kind = item.value("kind", itemKind);
        item.erase("kind");
        item.erase("apiVersion");
        c.items[kind].push_back(std::move(item));
      }
    }
    return c;
  }

  // The pages of one kind's LIST, `size` items each (at least one page).
  std::vector<std::string> pages(const std::string& kind, const std::string& apiVersion, std::size_t size) const {
    const auto it = items.find(kind);
    const std::vector<json> none;
    const std::vector<json>& all = it == items.end() ? none : it->second;
    std::vector<std::string> out;
    for (std::size_t from = 0; from == 0 || from < all.size(); from += size) {
      json page = {{"kind", kind + "List"}, {"apiVersion", apiVersion}, {"metadata", {{"resourceVersion", "42"}}}};
      if (from + size < all.size()) page["metadata"]["continue"] = kind + "-" + std::to_string(from + size);
      page["items"] = json::array();
      for (std::size_t i = from; i < std::min(all.size(), from + size); ++i) page["items"].push_back(all[i]);
      out.push_back(page.dump());
    }
    return out;
  }

  // Every answer of a live plan, in the order it asks: the cached resources, then (when the
  // policy balances by metrics-server usage) NodeMetrics and PodMetrics.
  std::vector<std::string> answers(std::size_t pageSize, bool metrics) const {
    std::vector<std::string> out;
    for (const auto& [kind, version] :
         std::vector<std::pair<std::string, std::string>>{{"Pod", "v1"},
                                                          {"Node", "v1"},
                                                          {"Namespace", "v1"},
                                                          {"PodDisruptionBudget", "policy/v1"},
                                                          {"PersistentVolumeClaim", "v1"},
                                                          {"NodeMetrics", "metrics.k8s.io/v1beta1"},
                                                          {"PodMetrics", "metrics.k8s.io/v1beta1"}}) {
      if (!metrics && kind.find("Metrics") != std::string::npos) continue;
      for (auto& p : pages(kind, version, pageSize)) out.push_back(std::move(p));
    }
    return out;
  }
};

std::string joinLines(const std::vector<std::string>& docs) {
  std::string out;
  for (const auto& d : docs) out += d + "\n";
  return out;
}

struct LivePlan {
  FakeApi api;
  plan::PlanOptions options;
  std::ostringstream out;
  std::ostringstream saved;
  std::optional<daemon::LivePlanFailure> failure;

  explicit LivePlan(const std::string& example) {
    options.policyPath = (kSrc / "examples" / example / "policy.yaml").string();
  }
  void serve(const std::vector<std::string>& answers) {
    for (const auto& a : answers) api.transport->onSend(Scripted::json(a));
  }
  LivePlan& run(plan::OutputFormat format = plan::OutputFormat::Table, api::Timestamp readAt = at(kReadAt)) {
    options.format = format;
    failure = daemon::runLivePlan(*api.client, options, readAt, out, &saved);
    return *this;
  }
  static constexpr const char* kReadAt = "2026-11-30T10:00:00Z";
};

// `plan --snapshot` on `snapshot` (a file written for the test), at `now`.
std::string replay(const std::string& snapshot, const plan::PlanOptions& live, api::Timestamp now) {
  const fs::path file = fs::temp_directory_path() / ("kdesched-live-plan-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file, std::ios::binary) << snapshot;
  plan::PlanOptions o = live;
  o.snapshotPath = file.string();
  o.now = now;
  std::ostringstream out;
  Status st = plan::runPlan(o, out);
  fs::remove(file);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out.str();
}

// Every request GET, to the collections named: nothing written, nothing read beyond them.
void expectOnlyGets(FakeTransport& t, std::size_t expected) {
  const auto sent = t.sent();
  EXPECT_EQ(sent.size(), expected);
  for (const auto& s : sent) EXPECT_EQ(s.method, "GET") << s.target;
}

TEST(LivePlan, OrderPaymentSavedAndReplayedByteForByte) {
  const Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/order-payment/snapshot.json");
  for (plan::OutputFormat format : {plan::OutputFormat::Table, plan::OutputFormat::Json}) {
    LivePlan p("order-payment");
    const std::vector<std::string> answers = cluster.answers(2, false);  // pods over two pages
    p.serve(answers);
    p.run(format);
    ASSERT_FALSE(p.failure) << p.failure->message;
    EXPECT_THAT(p.out.str(), HasSubstr("payment-5b7c9d6f4-q8wzr"));
    EXPECT_THAT(p.out.str(), HasSubstr("RemovePodsViolatingInterPodAntiAffinity"));
    expectOnlyGets(*p.api.transport, answers.size());
    EXPECT_EQ(p.api.transport->sent()[0].target, "/api/v1/pods?limit=500");
    EXPECT_EQ(p.api.transport->sent()[1].target, "/api/v1/pods?limit=500&continue=Pod-2");
    // The answers as the API server sent them, one a line.
    EXPECT_EQ(p.saved.str(), joinLines(answers));
    EXPECT_EQ(replay(p.saved.str(), p.options, at(LivePlan::kReadAt)), p.out.str());
    // And the same plan as the example's own snapshot file gives.
    plan::PlanOptions example = p.options;
    example.snapshotPath = (kSrc / "examples/order-payment/snapshot.json").string();
    example.now = at(LivePlan::kReadAt);
    std::ostringstream offline;
    ASSERT_TRUE(plan::runPlan(example, offline).isOk());
    EXPECT_EQ(offline.str(), p.out.str());
  }
}

TEST(LivePlan, UsageFromMetricsServerIsReadOnceSavedAndReplayed) {
  Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/usage-metrics-server/snapshot.json");
  // A pod whose container reports no cpu: a note, which the replay must print alike.
  cluster.items["PodMetrics"][0]["containers"][0]["usage"].erase("cpu");
  for (plan::OutputFormat format : {plan::OutputFormat::Table, plan::OutputFormat::Json}) {
    LivePlan p("usage-metrics-server");
    const std::vector<std::string> answers = cluster.answers(500, true);
    p.serve(answers);
    p.run(format);
    ASSERT_FALSE(p.failure) << p.failure->message;
    EXPECT_THAT(p.out.str(), HasSubstr("overutilized by metrics-server usage"));
    EXPECT_THAT(p.out.str(), HasSubstr("PodMetrics shop/web-5f7d8-a1: a container reports no cpu"));
    expectOnlyGets(*p.api.transport, answers.size());
    EXPECT_EQ(p.api.sentTo("/apis/metrics.k8s.io/v1beta1/nodes"), 1u);
    EXPECT_EQ(p.api.sentTo("/apis/metrics.k8s.io/v1beta1/pods"), 1u);
    EXPECT_EQ(replay(p.saved.str(), p.options, at(LivePlan::kReadAt)), p.out.str());
  }
}

TEST(LivePlan, UsageSamplesAreJudgedAtTheReadTime) {
  // Read an hour after metrics-server measured: every sample is stale, so nothing moves (a plan of
  // a snapshot file without --now would take the newest sample's time and move pods).
  const Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/usage-metrics-server/snapshot.json");
  LivePlan p("usage-metrics-server");
  p.serve(cluster.answers(500, true));
  p.run(plan::OutputFormat::Table, at("2026-11-30T11:00:00Z"));
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_THAT(p.out.str(), HasSubstr("No evictions."));
  EXPECT_EQ(replay(p.saved.str(), p.options, at("2026-11-30T11:00:00Z")), p.out.str());
}

TEST(LivePlan, ThePolicysPriorityClassIsReadOnceAndSaved) {
  const fs::path policy = fs::temp_directory_path() / ("kdesched-live-plan-policy-" + std::to_string(::getpid()));
  std::string profile =
      "  pluginConfig:\n  - name: DefaultEvictor\n    args: {priorityThreshold: {name: high}}\n"
      "  - name: RemovePodsViolatingInterPodAntiAffinity\n"
      "  plugins: {deschedule: {enabled: [RemovePodsViolatingInterPodAntiAffinity]}}\n";
  std::ofstream(policy) << "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n" +
                               profile + "- name: b\n" + profile;
  const std::string pc =
      R"({"kind":"PriorityClass","apiVersion":"scheduling.k8s.io/v1","metadata":{"name":"high"},"value":1000})";
  const Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/order-payment/snapshot.json");
  LivePlan p("order-payment");
  p.options.policyPath = policy.string();
  p.serve({pc});
  p.serve(cluster.answers(500, false));
  p.run(plan::OutputFormat::Json);
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_EQ(p.api.sentTo("/apis/scheduling.k8s.io/v1/priorityclasses/high"), 1u);  // two profiles, one GET
  EXPECT_THAT(p.out.str(), HasSubstr("\"PriorityClass\": 1"));
  EXPECT_THAT(p.saved.str(), HasSubstr(pc + "\n"));
  EXPECT_EQ(replay(p.saved.str(), p.options, at(LivePlan::kReadAt)), p.out.str());
  fs::remove(policy);
}

TEST(LivePlan, APodOnANodeTheListLacksIsWarnedAsTheReplayWarnsIt) {
  Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/order-payment/snapshot.json");
  json stray = cluster.items["Pod"][0];
  stray["metadata"]["name"] = "stray";
  stray["metadata"]["uid"] = "uid-stray";
  stray["spec"]["nodeName"] = "node9";
  cluster.items["Pod"].push_back(stray);
  LivePlan p("order-payment");
  p.serve(cluster.answers(500, false));
  p.run();
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_THAT(p.out.str(), HasSubstr("warning: pod default/stray is bound to node node9"));
  EXPECT_THAT(p.out.str(), HasSubstr("skipped 1 Pod on an unknown node"));
  EXPECT_EQ(replay(p.saved.str(), p.options, at(LivePlan::kReadAt)), p.out.str());
}

TEST(LivePlan, AListThatStartsOverSavesOnlyItsLastRun) {
  const Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/order-payment/snapshot.json");
  std::vector<std::string> answers = cluster.answers(2, false);
  LivePlan p("order-payment");
  // Pods: page 1, then the continue token has expired (410), then pages 1 and 2 again.
  p.serve({answers[0]});
  p.api.transport->onSend(Scripted::json(apiStatus(410, "Expired"), 410));
  p.serve(answers);
  p.run();
  ASSERT_FALSE(p.failure) << p.failure->message;
  EXPECT_EQ(p.saved.str(), joinLines(answers));
  EXPECT_EQ(replay(p.saved.str(), p.options, at(LivePlan::kReadAt)), p.out.str());
  EXPECT_THAT(p.out.str(), HasSubstr("3 pods"));
}

TEST(LivePlan, AnObjectItCannotDecodeFailsThePlanAfterSavingIt) {
  Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/order-payment/snapshot.json");
  cluster.items["Pod"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1x";
  const std::string name = cluster.items["Pod"][0]["metadata"]["name"];
  LivePlan p("order-payment");
  p.serve(cluster.answers(500, false));
  p.run();
  ASSERT_TRUE(p.failure);
  EXPECT_EQ(p.failure->exitCode, daemon::kExitFailure);
  EXPECT_THAT(p.failure->message, HasSubstr("pods default/" + name + ": spec.containers[0].resources.requests.cpu"));
  EXPECT_EQ(p.out.str(), "");
  EXPECT_THAT(p.saved.str(), HasSubstr("\"1x\""));  // the bug report shows it
}

TEST(LivePlan, ARefusedListNamesTheResourceAndTheVerb) {
  LivePlan p("order-payment");
  p.api.transport->onSend(Scripted::json(apiStatus(403, "Forbidden"), 403));
  p.run();
  ASSERT_TRUE(p.failure);
  EXPECT_EQ(p.failure->exitCode, daemon::kExitFailure);
  EXPECT_THAT(p.failure->message, HasSubstr("cannot list pods: 403"));
  EXPECT_THAT(p.failure->message, HasSubstr("grant list on pods"));
  EXPECT_EQ(p.saved.str(), "");
}

TEST(LivePlan, NoNodeMetricsFromMetricsServerIsAnErrorNotAPlanByRequests) {
  Cluster cluster = Cluster::fromSnapshot(kSrc / "examples/usage-metrics-server/snapshot.json");
  cluster.items.erase("NodeMetrics");
  LivePlan p("usage-metrics-server");
  p.serve(cluster.answers(500, true));
  p.run();
  ASSERT_TRUE(p.failure);
  EXPECT_EQ(p.failure->exitCode, daemon::kExitBadInput);
  EXPECT_THAT(p.failure->message, HasSubstr("the API server answered no NodeMetrics"));
}

TEST(LivePlan, ABadPolicyAsksTheClusterNothing) {
  LivePlan p("order-payment");
  p.options.policyPath = "/nonexistent/policy.yaml";
  p.run();
  ASSERT_TRUE(p.failure);
  EXPECT_EQ(p.failure->exitCode, daemon::kExitBadInput);
  EXPECT_TRUE(p.api.transport->sent().empty());
}

}  // namespace
}  // namespace kdesched::testing
