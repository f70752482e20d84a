// RemovePodsViolatingTopologySpreadConstraint args: every default and every validation message.
#include "pkg/plugins/topologyspread/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using api::UnsatisfiableAction;
using plugins::topologyspread::decodeArgs;
using plugins::topologyspread::kName;

TEST(TopologySpreadArgs, Defaults) {
  // Upstream's defaulting: an absent, null or empty constraints list means [DoNotSchedule].
  for (const char* yaml : {"", "{}", "constraints: []", "constraints: null", "topologyBalanceNodeFit: null"}) {
    auto a = decodeArgs(rawArgs(kName, yaml));
    ASSERT_TRUE(a.isOk()) << a.error();
    EXPECT_EQ(a->constraints, std::vector<UnsatisfiableAction>{UnsatisfiableAction::DoNotSchedule}) << yaml;
    EXPECT_TRUE(a->balances(UnsatisfiableAction::DoNotSchedule)) << yaml;
    EXPECT_FALSE(a->balances(UnsatisfiableAction::ScheduleAnyway)) << yaml;
    EXPECT_TRUE(a->topologyBalanceNodeFit) << yaml;
    EXPECT_FALSE(a->filter.namespaces.has_value()) << yaml;
    EXPECT_FALSE(a->filter.labelSelector.has_value()) << yaml;
  }
}

TEST(TopologySpreadArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "constraints: [DoNotSchedule, ScheduleAnyway]\ntopologyBalanceNodeFit: false\n"
                              "namespaces: {include: [shop]}\nlabelSelector: {matchLabels: {app: web}}\n"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_TRUE(a->balances(UnsatisfiableAction::DoNotSchedule));
  EXPECT_TRUE(a->balances(UnsatisfiableAction::ScheduleAnyway));
  EXPECT_FALSE(a->topologyBalanceNodeFit);
  ASSERT_TRUE(a->filter.namespaces.has_value());
  EXPECT_EQ(a->filter.namespaces->include, std::vector<std::string>{"shop"});
  ASSERT_TRUE(a->filter.labelSelector.has_value());
  EXPECT_EQ(a->filter.labelSelector->toString(), "app=web");

  auto soft = decodeArgs(rawArgs(kName, "constraints: [ScheduleAnyway]"));
  ASSERT_TRUE(soft.isOk()) << soft.error();
  EXPECT_FALSE(soft->balances(UnsatisfiableAction::DoNotSchedule));
  EXPECT_TRUE(soft->balances(UnsatisfiableAction::ScheduleAnyway));
}

class TopologySpreadArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(TopologySpreadArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, TopologySpreadArgsRejected,
    ::testing::Values(
        // Upstream's message byte for byte (its %v of a Go set), with the field path in front.
        RejectedArgs{"unknown_constraint", "constraints: [DoNotSchedule, foo]",
                     ".constraints[1]: constraint foo is not one of map[DoNotSchedule:{} ScheduleAnyway:{}]"},
        RejectedArgs{"constraints_not_a_list", "constraints: DoNotSchedule",
                     ".constraints: must be a list of strings, got \"DoNotSchedule\""},
        RejectedArgs{"node_fit_not_a_bool", "topologyBalanceNodeFit: maybe",
                     ".topologyBalanceNodeFit: must be true or false, got \"maybe\""},
        RejectedArgs{"include_and_exclude", "namespaces: {include: [a], exclude: [b]}",
                     ".namespaces: only one of Include/Exclude namespaces can be set"},
        RejectedArgs{"bad_label_selector", "labelSelector: {matchExpressions: [{key: foo, operator: In}]}",
                     ".labelSelector.matchExpressions[0].values: must be specified when operator is In or NotIn"},
        RejectedArgs{"unknown_field", "topologyBalanceNodeFitt: false",
                     ".topologyBalanceNodeFitt: unknown field \"topologyBalanceNodeFitt\" (did you mean "
                     "\"topologyBalanceNodeFit\"?)"}),
    rejectedArgsName);

TEST(TopologySpreadArgs, ThroughThePolicyLoader) {
  auto engine = engineFor(policyWith(kName, "balance", "      constraints: [Sometimes]\n"));
  ASSERT_FALSE(engine.isOk());
  EXPECT_NE(engine.error().find("profiles[0].pluginConfig[1].args.constraints[0]: constraint Sometimes is not one of "
                                "map[DoNotSchedule:{} ScheduleAnyway:{}]"),
            std::string::npos)
      << engine.error();
}

TEST(TopologySpreadArgs, NamesForReasons) {
  EXPECT_EQ(plugins::topologyspread::toString(UnsatisfiableAction::DoNotSchedule), "DoNotSchedule");
  EXPECT_EQ(plugins::topologyspread::toString(UnsatisfiableAction::ScheduleAnyway), "ScheduleAnyway");
  EXPECT_EQ(plugins::topologyspread::toString(api::InclusionPolicy::Honor), "Honor");
  EXPECT_EQ(plugins::topologyspread::toString(api::InclusionPolicy::Ignore), "Ignore");
}

}  // namespace
}  // namespace kdesched::testing
