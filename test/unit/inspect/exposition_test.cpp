#include "pkg/inspect/exposition.h"

#include <gtest/gtest.h>

namespace kdesched::inspect {
namespace {

TEST(Exposition, ReadsSamplesWithLabelsAndSkipsCommentsAndBrokenLines) {
  const auto samples = parseExposition(
      "# HELP descheduler_pods_evicted_total Number of evicted pods\n"
      "# TYPE descheduler_pods_evicted_total counter\n"
      "descheduler_pods_evicted_total{namespace=\"default\",result=\"success\",strategy=\"A\"} 3\n"
      "descheduler_pods_evicted_total{namespace=\"a\\\"b\",result=\"error\"} 1 1700000000000\n"
      "kdesched_last_successful_cycle_timestamp_seconds 1.7e+09\n"
      "broken{a=\"x\" 5\n"
      "novalue{a=\"x\"} \n");
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].name, "descheduler_pods_evicted_total");
  EXPECT_EQ(samples[0].labels.at("result"), "success");
  EXPECT_EQ(samples[0].value, 3);
  EXPECT_EQ(samples[1].labels.at("namespace"), "a\"b");
  EXPECT_EQ(samples[1].value, 1);
  EXPECT_TRUE(samples[2].labels.empty());
  EXPECT_EQ(samples[2].value, 1.7e9);
}

TEST(Exposition, SumsByALabel) {
  const auto samples = parseExposition(
      "x{result=\"success\",node=\"n1\"} 2\nx{result=\"success\",node=\"n2\"} 3\nx{result=\"error\"} 1\ny 7\n");
  const auto by = sumBy(samples, "x", "result");
  EXPECT_EQ(by.at("success"), 5);
  EXPECT_EQ(by.at("error"), 1);
  EXPECT_EQ(sumBy(samples, "x", "").at(""), 6);
  EXPECT_TRUE(sumBy(samples, "z", "result").empty());
}

}  // namespace
}  // namespace kdesched::inspect
