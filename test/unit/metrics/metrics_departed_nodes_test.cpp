// descheduler_pods_evicted_total{node}: the series of a node that left the cluster go after a
// grace period, on the injected clock; those of nodes still there, and of no node, stay.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "pkg/metrics/metrics.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::metrics {
namespace {

using namespace std::chrono_literals;

bool has(const std::string& text, const std::string& series) { return text.find(series) != std::string::npos; }

TEST(MetricsDepartedNodes, ANodeGoneForTheGracePeriodLosesItsSeriesAPresentNodeKeepsThem) {
  kdesched::testing::FakeClock clock;
  Metrics m("0.1.0", {{"S", "p"}});
  m.podEvicted("success", "S", "p", "shop", "spot-1");
  m.podEvicted("error", "S", "p", "shop", "spot-1");
  m.podEvicted("success", "S", "p", "shop", "stays");
  std::set<std::string> cluster = {"stays"};  // spot-1 was reclaimed
  auto present = [&](const std::string& node) { return cluster.count(node) > 0; };
  const std::string spot = R"(node="spot-1")";

  m.forgetDepartedNodes(present, clock.now(), 1h);  // first seen absent now
  clock.advance(59min);
  m.forgetDepartedNodes(present, clock.now(), 1h);
  EXPECT_TRUE(has(m.serialize(), spot)) << "kept for the grace period";

  clock.advance(1min);
  m.forgetDepartedNodes(present, clock.now(), 1h);
  const std::string text = m.serialize();
  EXPECT_FALSE(has(text, spot)) << text;
  EXPECT_TRUE(has(text, R"(descheduler_pods_evicted_total{namespace="shop",node="stays",profile="p",)"
                        R"(result="success",strategy="S"} 1)"))
      << text;
  EXPECT_TRUE(has(text, R"(descheduler_pods_evicted{namespace="shop",node="stays")")) << text;
  EXPECT_TRUE(has(text, R"(descheduler_pods_evicted_total{namespace="",node="",profile="p",result="success")"))
      << "the series every strategy starts with are no node's";

  // Back under the same name: its counters start again from 0, a reset Prometheus allows for.
  cluster.insert("spot-1");
  m.podEvicted("success", "S", "p", "shop", "spot-1");
  EXPECT_TRUE(has(m.serialize(), R"(descheduler_pods_evicted_total{namespace="shop",node="spot-1",profile="p",)"
                                 R"(result="success",strategy="S"} 1)"));
}

TEST(MetricsDepartedNodes, ANodeBackWithinTheGracePeriodKeepsItsCounts) {
  kdesched::testing::FakeClock clock;
  Metrics m("0.1.0", {});
  m.podEvicted("success", "S", "p", "shop", "flaky");
  bool there = false;
  auto present = [&](const std::string&) { return there; };
  m.forgetDepartedNodes(present, clock.now(), 1h);
  clock.advance(50min);
  there = true;
  m.forgetDepartedNodes(present, clock.now(), 1h);
  there = false;
  clock.advance(50min);
  m.forgetDepartedNodes(present, clock.now(), 1h);  // absent again: the grace starts over
  m.podEvicted("success", "S", "p", "shop", "flaky");
  EXPECT_TRUE(has(m.serialize(), R"(node="flaky",profile="p",result="success",strategy="S"} 2)")) << m.serialize();
}

}  // namespace
}  // namespace kdesched::metrics
