// RemovePodsViolatingNodeTaints args: every default and every validation message.
#include "pkg/plugins/removepodsviolatingnodetaints/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::removepodsviolatingnodetaints::decodeArgs;
using plugins::removepodsviolatingnodetaints::kName;

TEST(NodeTaintsArgs, DefaultsConsiderEveryNoScheduleTaintOfEveryPod) {
  auto a = decodeArgs(rawArgs(kName, ""));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_TRUE(a->excludedTaints.empty());
  EXPECT_FALSE(a->includedTaints.has_value());
  EXPECT_FALSE(a->includePreferNoSchedule);
  EXPECT_FALSE(a->filter.namespaces.has_value());
  EXPECT_FALSE(a->filter.labelSelector.has_value());
  EXPECT_TRUE(a->considers({"any", "", api::TaintEffect::NoSchedule}));
  EXPECT_FALSE(a->considers({"any", "", api::TaintEffect::PreferNoSchedule}));
  EXPECT_FALSE(a->considers({"any", "", api::TaintEffect::NoExecute}));
}

TEST(NodeTaintsArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "excludedTaints: [dedicated, zone=a]\n"
                              "includePreferNoSchedule: true\n"
                              "namespaces: {exclude: [kube-system]}\n"
                              "labelSelector: {matchLabels: {app: web}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->excludedTaints, (std::vector<std::string>{"dedicated", "zone=a"}));
  EXPECT_TRUE(a->includePreferNoSchedule);
  EXPECT_EQ(a->filter.namespaces->exclude, std::vector<std::string>{"kube-system"});
  EXPECT_EQ(a->filter.labelSelector->toString(), "app=web");
  EXPECT_TRUE(a->considers({"soft", "", api::TaintEffect::PreferNoSchedule}));
  EXPECT_FALSE(a->considers({"dedicated", "x", api::TaintEffect::NoSchedule}));
  EXPECT_FALSE(a->considers({"zone", "a", api::TaintEffect::NoSchedule}));
  EXPECT_TRUE(a->considers({"zone", "b", api::TaintEffect::NoSchedule}));
}

TEST(NodeTaintsArgs, KeyValueEntriesNeedAValue) {
  // Upstream builds `key=value` only for a taint with a value: `zone=` names no taint.
  auto a = decodeArgs(rawArgs(kName, "includedTaints: [\"zone=\"]"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_FALSE(a->considers({"zone", "", api::TaintEffect::NoSchedule}));
}

TEST(NodeTaintsArgs, IncludedEmptyListIsKeptAndIncludesNothing) {
  auto a = decodeArgs(rawArgs(kName, "includedTaints: []\nexcludedTaints: [x]"));
  ASSERT_TRUE(a.isOk()) << a.error();
  ASSERT_TRUE(a->includedTaints.has_value());
  EXPECT_TRUE(a->includedTaints->empty());
  EXPECT_FALSE(a->considers({"any", "", api::TaintEffect::NoSchedule}));
}

class NodeTaintsArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(NodeTaintsArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodeTaintsArgsRejected,
    ::testing::Values(
        RejectedArgs{"included_and_excluded", "includedTaints: [a]\nexcludedTaints: [b]",
                     ".includedTaints: either includedTaints or excludedTaints can be set, but not both"},
        RejectedArgs{"include_and_exclude_namespaces", "namespaces: {include: [a], exclude: [b]}",
                     ".namespaces: only one of Include/Exclude namespaces can be set"},
        RejectedArgs{"bad_label_selector", "labelSelector: {matchExpressions: [{key: app, operator: Near}]}",
                     ".labelSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, "
                     "got \"Near\""},
        RejectedArgs{"taints_not_a_list", "excludedTaints: dedicated",
                     ".excludedTaints: must be a list of strings, got \"dedicated\""},
        RejectedArgs{"prefer_not_a_bool", "includePreferNoSchedule: yes please",
                     ".includePreferNoSchedule: must be true or false, got \"yes please\""},
        RejectedArgs{"unknown_field", "includedTaint: [a]",
                     ".includedTaint: unknown field \"includedTaint\" (did you mean \"includedTaints\"?)"}),
    rejectedArgsName);

TEST(NodeTaintsArgs, ThroughThePolicyLoader) {
  auto bad = engineFor(policyWith(kName, "deschedule", "      includedTaints: [a]\n      excludedTaints: [b]\n"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("profiles[0].pluginConfig[1].args.includedTaints: either includedTaints or "
                             "excludedTaints can be set, but not both"),
            std::string::npos)
      << bad.error();
}

}  // namespace
}  // namespace kdesched::testing
