#include "pkg/metrics/metrics.h"

#include <gtest/gtest.h>

#include <cpprest/http_client.h>

#include <set>
#include <sstream>

#include "pkg/metrics/server.h"
#include "test/unit/metrics/serving.h"

namespace kdesched::metrics {
namespace {

using testing::freePort;
using testing::testClock;

TlsOptions plainHttp() {
  TlsOptions t;
  t.plainHttp = true;
  return t;
}
const TlsOptions kPlain = plainHttp();

std::pair<int, std::string> get(int port, const std::string& path) { return testing::get("http", port, path); }

TEST(Metrics, UpstreamNamesExistAtZeroFromTheStart) {
  Metrics m("0.1.0", {{"RemovePodsViolatingInterPodAntiAffinity", "default"}});
  std::string text = m.serialize();
  EXPECT_NE(text.find("descheduler_build_info{"), std::string::npos);
  EXPECT_NE(text.find("} 1"), std::string::npos);
  EXPECT_NE(text.find("descheduler_pods_evicted_total{namespace=\"\",node=\"\",profile=\"default\",result=\"success\","
                      "strategy=\"RemovePodsViolatingInterPodAntiAffinity\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("descheduler_strategy_duration_seconds_count{profile=\"default\",strategy="
                      "\"RemovePodsViolatingInterPodAntiAffinity\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("descheduler_loop_duration_seconds_count 0"), std::string::npos) << text;
}

TEST(Metrics, CountsEvictionsAndRefusals) {
  Metrics m("0.1.0", {});
  m.podEvicted("success", "S", "p", "default", "node2");
  m.podEvicted("success", "S", "p", "default", "node2");
  m.evictionRefused("pdb", "S", "p");
  m.loopDuration(0.2);
  std::string text = m.serialize();
  EXPECT_NE(text.find("descheduler_pods_evicted_total{namespace=\"default\",node=\"node2\",profile=\"p\",result="
                      "\"success\",strategy=\"S\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("descheduler_pods_evicted{namespace=\"default\""), std::string::npos);
  EXPECT_NE(text.find("kdesched_evictions_refused_total{profile=\"p\",reason=\"pdb\",strategy=\"S\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("descheduler_loop_duration_seconds_count 1"), std::string::npos);
}

// The catalogue (kdesched version --metrics, read by the docs check) lists every family, also
// those a fresh instance exposes nothing of, each once, and no series.
TEST(Metrics, CatalogueListsEveryFamilyOnceSeriesOrNot) {
  const std::string fresh = Metrics("0.1.0", {}).serialize();
  ASSERT_EQ(fresh.find("kdesched_watch_restarts_total"), std::string::npos) << "no longer a family without series";
  const std::string catalogue = Metrics::catalogue("0.1.0");
  for (const char* type : {"# TYPE kdesched_watch_restarts_total counter", "# TYPE kdesched_cache_objects gauge",
                           "# TYPE kdesched_cache_stale gauge", "# TYPE kdesched_event_to_eviction_seconds histogram",
                           "# TYPE descheduler_descheduler_strategy_duration_seconds histogram",
                           "# TYPE process_cpu_seconds_total counter"})
    EXPECT_NE(catalogue.find(std::string(type) + "\n"), std::string::npos) << type << " in\n" << catalogue;
  std::set<std::string> names;
  std::istringstream lines(catalogue);
  std::string line;
  while (std::getline(lines, line)) {
    ASSERT_EQ(line.rfind("# ", 0), 0u) << "not a HELP or TYPE line: " << line;
    if (line.rfind("# TYPE ", 0) != 0) continue;
    EXPECT_TRUE(names.insert(line.substr(7, line.find(' ', 7) - 7)).second) << line;
  }
  EXPECT_EQ(names.size(), 36u) << catalogue;  // 26 registered families, kdesched_cache_stale, 9 process_*
}

// A budget's series is there while the budget is active, and goes when its window closes.
TEST(Metrics, BudgetRemainingFollowsActiveBudgets) {
  Metrics m("0.1.0", {});
  m.budgetRemaining("freeze", 0);
  m.budgetRemaining("nightly", 3);
  std::string text = m.serialize();
  EXPECT_NE(text.find("kdesched_budget_remaining{budget=\"freeze\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kdesched_budget_remaining{budget=\"nightly\"} 3\n"), std::string::npos) << text;
  m.budgetRemaining("freeze", std::nullopt);
  m.budgetRemaining("never-active", std::nullopt);
  text = m.serialize();
  EXPECT_EQ(text.find("budget=\"freeze\""), std::string::npos) << text;
  EXPECT_EQ(text.find("budget=\"never-active\""), std::string::npos) << text;
  EXPECT_NE(text.find("kdesched_budget_remaining{budget=\"nightly\"} 3\n"), std::string::npos) << text;
}

TEST(Metrics, CacheStaleIsReadAtEachScrape) {
  Metrics m("0.1.0", {});
  EXPECT_EQ(m.serialize().find("kdesched_cache_stale"), std::string::npos) << "no source, no series";
  bool podsStale = false;
  m.cacheStaleSource([&] { return std::vector<std::pair<std::string, bool>>{{"pods", podsStale}, {"nodes", false}}; });
  std::string text = m.serialize();
  EXPECT_NE(text.find("# TYPE kdesched_cache_stale gauge"), std::string::npos) << text;
  EXPECT_NE(text.find("kdesched_cache_stale{resource=\"pods\"} 0"), std::string::npos) << text;
  EXPECT_NE(text.find("kdesched_cache_stale{resource=\"nodes\"} 0"), std::string::npos) << text;
  podsStale = true;
  text = m.serialize();
  EXPECT_NE(text.find("kdesched_cache_stale{resource=\"pods\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("kdesched_cache_stale{resource=\"nodes\"} 0"), std::string::npos) << text;
}

TEST(Server, ServesMetricsHealthAndReadiness) {
  Metrics m("0.1.0", {});
  bool ready = false;
  Server s(&m, [&] { return Readiness{ready, ready ? "leader" : "caches not synced"}; });
  int port = freePort();
  ASSERT_TRUE(s.start("127.0.0.1", port, kPlain, testClock()).isOk());
  EXPECT_EQ(get(port, "/healthz").first, 200);
  auto notReady = get(port, "/readyz");
  EXPECT_EQ(notReady.first, 503);
  EXPECT_EQ(notReady.second, "caches not synced");
  ready = true;
  EXPECT_EQ(get(port, "/readyz").first, 200);
  auto metrics = get(port, "/metrics");
  EXPECT_EQ(metrics.first, 200);
  EXPECT_NE(metrics.second.find("descheduler_build_info"), std::string::npos);
  EXPECT_EQ(get(port, "/nope").first, 404);
  s.stop();
}

TEST(Server, TakenPortIsAClearError) {
  Metrics m("0.1.0", {});
  int port = freePort();
  Server first(&m, nullptr);
  ASSERT_TRUE(first.start("127.0.0.1", port, kPlain, testClock()).isOk());
  Server second(&m, nullptr);
  Status st = second.start("127.0.0.1", port, kPlain, testClock());
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("cannot serve metrics on 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace kdesched::metrics
