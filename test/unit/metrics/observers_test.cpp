#include "pkg/metrics/observers.h"

#include <gtest/gtest.h>

#include <sstream>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::metrics {
namespace {

using framework::EvictResult;
using framework::Refusal;

// The value of the one series of `family` whose labels include every one of `labels` (0 if none).
double value(const std::string& text, const std::string& family, const std::vector<std::string>& labels) {
  std::istringstream in(text);
  double total = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(family + "{", 0) != 0) continue;
    bool all = true;
    for (const auto& l : labels) all = all && line.find(l) != std::string::npos;
    if (all) total += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

struct Case {
  std::string name;
  Refusal refusal;
  std::string reason;            // kdesched_evictions_refused_total{reason}
  std::string evictResult = "";  // descheduler_pods_evicted_total{result}, "" when not counted there
};

class EvictionMetricsRefusals : public ::testing::TestWithParam<Case> {};

TEST_P(EvictionMetricsRefusals, CountEachUnderItsOwnReason) {
  Metrics m("0.1.0", {});
  testing::FakeClock clock;
  EvictionMetrics sink(m, clock);
  auto pod = testing::PodBuilder("payment").node("node2").build();
  evictor::Decision d{pod.get(), "node2", "S", "p", "why"};
  sink.refused({d, EvictResult::refused(GetParam().refusal, "someone", "detail")});
  const std::string text = m.serialize();
  EXPECT_EQ(value(text, "kdesched_evictions_refused_total", {"reason=\"" + GetParam().reason + "\""}), 1) << text;
  const double evicted = value(text, "descheduler_pods_evicted_total", {"strategy=\"S\""});
  if (GetParam().evictResult.empty()) {
    EXPECT_EQ(evicted, 0) << text;
  } else {
    EXPECT_EQ(evicted, 1) << text;
    EXPECT_EQ(value(text, "descheduler_pods_evicted_total", {"result=\"" + GetParam().evictResult + "\""}), 1) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, EvictionMetricsRefusals,
    ::testing::Values(Case{.name = "shutdown", .refusal = Refusal::Shutdown, .reason = "shutdown"},
                      Case{.name = "staleCache", .refusal = Refusal::StaleCache, .reason = "stale-cache"},
                      Case{.name = "notLeader", .refusal = Refusal::NotLeader, .reason = "not-leader"},
                      Case{.name = "filter", .refusal = Refusal::Filter, .reason = "filter"},
                      Case{.name = "antiFlapping", .refusal = Refusal::AntiFlapping, .reason = "anti-flapping"},
                      Case{.name = "api", .refusal = Refusal::ApiError, .reason = "api", .evictResult = "error"},
                      Case{.name = "pdb", .refusal = Refusal::Pdb, .reason = "pdb", .evictResult = "error"},
                      Case{.name = "nodeLimit",
                           .refusal = Refusal::NodeLimit,
                           .reason = "limit-node",
                           .evictResult = "maximum number of evicted pods per node reached"},
                      Case{.name = "totalLimit",
                           .refusal = Refusal::TotalLimit,
                           .reason = "limit-total",
                           .evictResult = "maximum number of evicted pods per a descheduling cycle reached"}),
    [](const auto& info) { return info.param.name; });

TEST(EvictionMetrics, CountsSuccesses) {
  Metrics m("0.1.0", {});
  testing::FakeClock clock;
  EvictionMetrics sink(m, clock);
  auto pod = testing::PodBuilder("payment").node("node2").build();
  sink.evict({pod.get(), "node2", "S", "p", "why"});
  EXPECT_EQ(value(m.serialize(), "descheduler_pods_evicted_total",
                  {"result=\"success\"", "namespace=\"default\"", "node=\"node2\""}),
            1);
}

TEST(WatchMetrics, CountsRestartsAndRelistsByKind) {
  Metrics m("0.1.0", {});
  WatchMetrics w(m);
  w.onWatchRestart(api::Kind::Pod, "closed");
  w.onWatchRestart(api::Kind::Pod, "silent");
  w.onWatchRestart(api::Kind::Pod, "silent");
  w.onRelist(api::Kind::Node, "gone");
  w.onRelist(api::Kind::Node, "gone");
  const std::string text = m.serialize();
  EXPECT_EQ(value(text, "kdesched_watch_restarts_total", {"resource=\"Pod\"", "reason=\"closed\""}), 1) << text;
  EXPECT_EQ(value(text, "kdesched_watch_restarts_total", {"resource=\"Pod\"", "reason=\"silent\""}), 2) << text;
  EXPECT_EQ(value(text, "kdesched_relists_total", {"resource=\"Node\""}), 2) << text;
}

TEST(PluginTimer, ObservesStrategyDurations) {
  Metrics m("0.1.0", {});
  PluginTimer t(m);
  t.pluginFinished("p", "S", 0.5, Status::ok());
  EXPECT_EQ(value(m.serialize(), "descheduler_strategy_duration_seconds_count", {"strategy=\"S\""}), 1);
}

}  // namespace
}  // namespace kdesched::metrics
