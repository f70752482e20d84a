// RemoveFailedPods args: every default and every validation message.
#include "pkg/plugins/removefailedpods/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::removefailedpods::decodeArgs;
using plugins::removefailedpods::kName;

TEST(RemoveFailedPodsArgs, Defaults) {
  for (const char* yaml : {"", "minPodLifetimeSeconds: null"}) {
    SCOPED_TRACE(yaml);
    auto a = decodeArgs(rawArgs(kName, yaml));
    ASSERT_TRUE(a.isOk()) << a.error();
    EXPECT_EQ(a->minPodLifetimeSeconds, 3600u);
    EXPECT_TRUE(a->excludeOwnerKinds.empty());
    EXPECT_TRUE(a->reasons.empty());
    EXPECT_TRUE(a->exitCodes.empty());
    EXPECT_FALSE(a->includingInitContainers);
    EXPECT_FALSE(a->filter.namespaces.has_value());
    EXPECT_FALSE(a->filter.labelSelector.has_value());
  }
}

TEST(RemoveFailedPodsArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "minPodLifetimeSeconds: 0\n"
                              "excludeOwnerKinds: [Job]\n"
                              "reasons: [OOMKilled, Evicted]\n"
                              "exitCodes: [137, 1]\n"
                              "includingInitContainers: true\n"
                              "namespaces: {exclude: [kube-system]}\n"
                              "labelSelector: {matchLabels: {app: web}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->minPodLifetimeSeconds, 0u);  // explicit 0 is not defaulted
  EXPECT_EQ(a->excludeOwnerKinds, std::vector<std::string>{"Job"});
  EXPECT_EQ(a->reasons, (std::vector<api::Symbol>{api::Symbol("OOMKilled"), api::Symbol("Evicted")}));
  EXPECT_EQ(a->exitCodes, (std::vector<std::int32_t>{137, 1}));
  EXPECT_TRUE(a->includingInitContainers);
  ASSERT_TRUE(a->filter.namespaces.has_value());
  EXPECT_EQ(a->filter.namespaces->exclude, std::vector<std::string>{"kube-system"});
  ASSERT_TRUE(a->filter.labelSelector.has_value());
  EXPECT_EQ(a->filter.labelSelector->toString(), "app=web");
}

class RemoveFailedPodsArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(RemoveFailedPodsArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RemoveFailedPodsArgsRejected,
    ::testing::Values(
        RejectedArgs{"include_and_exclude", "namespaces: {include: [a], exclude: [b]}",
                     ".namespaces: only one of Include/Exclude namespaces can be set"},
        RejectedArgs{"bad_label_selector", "labelSelector: {matchExpressions: [{key: app, operator: Near}]}",
                     ".labelSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, "
                     "got \"Near\""},
        RejectedArgs{"negative_lifetime", "minPodLifetimeSeconds: -1",
                     ".minPodLifetimeSeconds: must be a non-negative integer, got -1"},
        RejectedArgs{"lifetime_as_duration", "minPodLifetimeSeconds: 1h",
                     ".minPodLifetimeSeconds: must be a non-negative integer, got \"1h\""},
        RejectedArgs{"exit_code_not_integer", "exitCodes: [137, OOM]",
                     ".exitCodes[1]: must be an integer between -2147483648 and 2147483647, got \"OOM\""},
        RejectedArgs{"reasons_not_a_list", "reasons: OOMKilled",
                     ".reasons: must be a list of strings, got \"OOMKilled\""},
        RejectedArgs{"init_not_bool", "includingInitContainers: sometimes",
                     ".includingInitContainers: must be true or false, got \"sometimes\""},
        RejectedArgs{"unknown_field", "minPodLifeTimeSeconds: 60",
                     ".minPodLifeTimeSeconds: unknown field \"minPodLifeTimeSeconds\" (did you mean "
                     "\"minPodLifetimeSeconds\"?)"}),
    rejectedArgsName);

TEST(RemoveFailedPodsArgs, ThroughThePolicyLoader) {
  auto bad = engineFor(policyWith(kName, "deschedule", "      namespaces: {include: [a], exclude: [b]}\n"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("profiles[0].pluginConfig[1].args.namespaces: only one of Include/Exclude namespaces "
                             "can be set"),
            std::string::npos)
      << bad.error();
  EXPECT_TRUE(engineFor(policyWith(kName, "deschedule")).isOk());
}

}  // namespace
}  // namespace kdesched::testing
