// PlanOptions::explainOnly, what `kubectl kdesched explain POD` prints: the pod's steps without the
// plan around them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "pkg/plan/plan.h"
#include "test/unit/testing/paths.h"

namespace kdesched::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

PlanOptions orderPayment() {
  PlanOptions o;
  o.snapshotPath = std::string(kdesched::testing::sourceDir()) + "/examples/order-payment/snapshot.json";
  o.policyPath = std::string(kdesched::testing::sourceDir()) + "/examples/order-payment/policy.yaml";
  o.now = 1800000000;
  o.explain = {"default/payment-5b7c9d6f4-q8wzr"};
  o.explainOnly = true;
  return o;
}

TEST(ExplainOnly, TheTableOfThePodWithoutThePlanAroundIt) {
  std::ostringstream out;
  ASSERT_TRUE(runPlan(orderPayment(), out).isOk());
  EXPECT_THAT(out.str(), StartsWith("Explain default/payment-5b7c9d6f4-q8wzr (node node2):\nPROFILE"));
  EXPECT_THAT(out.str(), HasSubstr("RemovePodsViolatingInterPodAntiAffinity  evicted"));
  EXPECT_THAT(out.str(), Not(HasSubstr("Summary:")));
  EXPECT_THAT(out.str(), Not(HasSubstr("LANDS ON")));
}

TEST(ExplainOnly, JsonIsThePodsObjectAndAnArrayForSeveral) {
  PlanOptions o = orderPayment();
  o.format = OutputFormat::Json;
  std::ostringstream one;
  ASSERT_TRUE(runPlan(o, one).isOk());
  const auto j = nlohmann::json::parse(one.str());
  EXPECT_EQ(j["name"], "payment-5b7c9d6f4-q8wzr");
  EXPECT_EQ(j["steps"][0]["outcome"], "evicted");
  EXPECT_FALSE(j.contains("evictions"));

  o.explain.push_back("default/order-6d4f9c8b7-x2k9p");
  std::ostringstream two;
  ASSERT_TRUE(runPlan(o, two).isOk());
  const auto both = nlohmann::json::parse(two.str());
  ASSERT_TRUE(both.is_array());
  EXPECT_EQ(both.size(), 2u);
}

}  // namespace
}  // namespace kdesched::plan
