// RemovePodsViolatingNodeAffinity args: every default and every validation message.
#include "pkg/plugins/nodeaffinity/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::nodeaffinity::decodeArgs;
using plugins::nodeaffinity::kName;
using plugins::nodeaffinity::kPreferred;
using plugins::nodeaffinity::kRequired;

TEST(NodeAffinityArgs, DefaultsListEveryPod) {
  auto a = decodeArgs(rawArgs(kName, "nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->nodeAffinityType, std::vector<std::string>{kRequired});
  EXPECT_FALSE(a->filter.namespaces.has_value());
  EXPECT_FALSE(a->filter.labelSelector.has_value());
  EXPECT_TRUE(a->filter.allows(*PodBuilder("p", "any").build()));
}

TEST(NodeAffinityArgs, ReadsEveryFieldAndKeepsTheTypesInOrder) {
  auto a = decodeArgs(rawArgs(kName,
                              "nodeAffinityType:\n"
                              "- preferredDuringSchedulingIgnoredDuringExecution\n"
                              "- requiredDuringSchedulingIgnoredDuringExecution\n"
                              "namespaces: {include: [shop]}\n"
                              "labelSelector: {matchLabels: {app: web}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->nodeAffinityType, (std::vector<std::string>{kPreferred, kRequired}));
  ASSERT_TRUE(a->filter.namespaces.has_value());
  EXPECT_EQ(a->filter.namespaces->include, std::vector<std::string>{"shop"});
  ASSERT_TRUE(a->filter.labelSelector.has_value());
  EXPECT_EQ(a->filter.labelSelector->toString(), "app=web");
}

class NodeAffinityArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(NodeAffinityArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodeAffinityArgsRejected,
    ::testing::Values(
        RejectedArgs{"no_args", "", ".nodeAffinityType: nodeAffinityType needs to be set"},
        RejectedArgs{"type_null", "nodeAffinityType: null", ".nodeAffinityType: nodeAffinityType needs to be set"},
        RejectedArgs{"type_empty", "nodeAffinityType: []", ".nodeAffinityType: nodeAffinityType needs to be set"},
        // kdesched only: upstream logs an unknown type at run time and skips it.
        RejectedArgs{"unknown_type", "nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution, sometimes]",
                     ".nodeAffinityType[1]: must be requiredDuringSchedulingIgnoredDuringExecution or "
                     "preferredDuringSchedulingIgnoredDuringExecution, got \"sometimes\""},
        RejectedArgs{"type_not_a_list", "nodeAffinityType: requiredDuringSchedulingIgnoredDuringExecution",
                     ".nodeAffinityType: must be a list of strings, got "
                     "\"requiredDuringSchedulingIgnoredDuringExecution\""},
        RejectedArgs{"include_and_exclude",
                     "nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]\n"
                     "namespaces: {include: [a], exclude: [b]}",
                     ".namespaces: only one of Include/Exclude namespaces can be set"},
        RejectedArgs{"bad_label_selector",
                     "nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]\n"
                     "labelSelector: {matchExpressions: [{key: app, operator: Near}]}",
                     ".labelSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, "
                     "got \"Near\""},
        RejectedArgs{"unknown_field", "nodeAffinityTypes: [requiredDuringSchedulingIgnoredDuringExecution]",
                     ".nodeAffinityTypes: unknown field \"nodeAffinityTypes\" (did you mean \"nodeAffinityType\"?)"}),
    rejectedArgsName);

TEST(NodeAffinityArgs, ThroughThePolicyLoader) {
  auto missing = engineFor(policyWith(kName, "deschedule", "      namespaces:\n        exclude: [x]\n"));
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.error().find("profiles[0].pluginConfig[1].args.nodeAffinityType: nodeAffinityType needs to be set"),
            std::string::npos)
      << missing.error();
  auto bad = engineFor(policyWith(kName, "deschedule", "      nodeAffinityType: [sometimes]\n"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("nodeAffinityType[0]: must be requiredDuringSchedulingIgnoredDuringExecution or "
                             "preferredDuringSchedulingIgnoredDuringExecution, got \"sometimes\""),
            std::string::npos)
      << bad.error();
}

}  // namespace
}  // namespace kdesched::testing
