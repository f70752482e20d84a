// RemovePodsHavingTooManyRestarts args: every default and every validation message.
#include "pkg/plugins/removepodshavingtoomanyrestarts/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::removepodshavingtoomanyrestarts::decodeArgs;
using plugins::removepodshavingtoomanyrestarts::kName;

TEST(TooManyRestartsArgs, Defaults) {
  auto a = decodeArgs(rawArgs(kName, "podRestartThreshold: 1"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->podRestartThreshold, 1);
  EXPECT_FALSE(a->includingInitContainers);
  EXPECT_TRUE(a->states.empty());
  EXPECT_FALSE(a->filter.namespaces.has_value());
  EXPECT_FALSE(a->filter.labelSelector.has_value());
}

TEST(TooManyRestartsArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "podRestartThreshold: 100\n"
                              "includingInitContainers: true\n"
                              "states: [CrashLoopBackOff, Running]\n"
                              "namespaces: {include: [shop]}\n"
                              "labelSelector: {matchLabels: {app: web}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->podRestartThreshold, 100);
  EXPECT_TRUE(a->includingInitContainers);
  EXPECT_EQ(a->states, (std::vector<api::Symbol>{api::Symbol("CrashLoopBackOff"), api::Symbol("Running")}));
  ASSERT_TRUE(a->filter.namespaces.has_value());
  EXPECT_EQ(a->filter.namespaces->include, std::vector<std::string>{"shop"});
  ASSERT_TRUE(a->filter.labelSelector.has_value());
  EXPECT_EQ(a->filter.labelSelector->toString(), "app=web");
}

class TooManyRestartsArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(TooManyRestartsArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, TooManyRestartsArgsRejected,
    ::testing::Values(
        RejectedArgs{"no_args", "",
                     ".podRestartThreshold: invalid PodsHavingTooManyRestarts threshold (must be at least 1, got 0)"},
        RejectedArgs{"threshold_zero", "podRestartThreshold: 0",
                     ".podRestartThreshold: invalid PodsHavingTooManyRestarts threshold (must be at least 1, got 0)"},
        RejectedArgs{"threshold_negative", "podRestartThreshold: -3",
                     ".podRestartThreshold: invalid PodsHavingTooManyRestarts threshold (must be at least 1, got -3)"},
        RejectedArgs{"threshold_not_integer", "podRestartThreshold: many",
                     ".podRestartThreshold: must be an integer, got \"many\""},
        RejectedArgs{"unknown_state", "podRestartThreshold: 1\nstates: [Running, Pending]",
                     ".states[1]: states must be one of [CrashLoopBackOff Running], got \"Pending\""},
        RejectedArgs{"include_and_exclude", "podRestartThreshold: 1\nnamespaces: {include: [a], exclude: [b]}",
                     ".namespaces: only one of Include/Exclude namespaces can be set"},
        RejectedArgs{"bad_label_selector",
                     "podRestartThreshold: 1\nlabelSelector: {matchExpressions: [{key: app, operator: Near}]}",
                     ".labelSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, "
                     "got \"Near\""},
        RejectedArgs{"unknown_field", "podRestartTreshold: 3",
                     ".podRestartTreshold: unknown field \"podRestartTreshold\" (did you mean "
                     "\"podRestartThreshold\"?)"}),
    rejectedArgsName);

TEST(TooManyRestartsArgs, ThroughThePolicyLoader) {
  auto bad = engineFor(policyWith(kName, "deschedule", "      states: [Running]\n"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("profiles[0].pluginConfig[1].args.podRestartThreshold: invalid "
                             "PodsHavingTooManyRestarts threshold"),
            std::string::npos)
      << bad.error();
  EXPECT_TRUE(engineFor(policyWith(kName, "deschedule", "      podRestartThreshold: 3\n")).isOk());
}

}  // namespace
}  // namespace kdesched::testing
