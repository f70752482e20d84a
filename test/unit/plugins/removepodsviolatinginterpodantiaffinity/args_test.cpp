// RemovePodsViolatingInterPodAntiAffinity args: every default and every validation message.
#include "pkg/plugins/removepodsviolatinginterpodantiaffinity/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::removepodsviolatinginterpodantiaffinity::decodeArgs;
using plugins::removepodsviolatinginterpodantiaffinity::kName;

TEST(AntiAffinityArgs, DefaultsListEveryPod) {
  for (const char* yaml : {"", "{}", "namespaces: null\nlabelSelector: null"}) {
    auto a = decodeArgs(rawArgs(kName, yaml));
    ASSERT_TRUE(a.isOk()) << a.error();
    EXPECT_FALSE(a->filter.namespaces.has_value()) << yaml;
    EXPECT_FALSE(a->filter.labelSelector.has_value()) << yaml;
    EXPECT_TRUE(a->filter.allows(*PodBuilder("p", "any").build())) << yaml;
  }
}

TEST(AntiAffinityArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName, "namespaces: {exclude: [kube-system]}\nlabelSelector: {matchLabels: {app: web}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  ASSERT_TRUE(a->filter.namespaces.has_value());
  EXPECT_EQ(a->filter.namespaces->exclude, std::vector<std::string>{"kube-system"});
  ASSERT_TRUE(a->filter.labelSelector.has_value());
  EXPECT_EQ(a->filter.labelSelector->toString(), "app=web");
  EXPECT_TRUE(a->filter.allows(*PodBuilder("p", "shop").label("app", "web").build()));
  EXPECT_FALSE(a->filter.allows(*PodBuilder("p", "kube-system").label("app", "web").build()));
  EXPECT_FALSE(a->filter.allows(*PodBuilder("p", "shop").label("app", "db").build()));
}

class AntiAffinityArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(AntiAffinityArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, AntiAffinityArgsRejected,
    ::testing::Values(RejectedArgs{"include_and_exclude", "namespaces: {include: [a], exclude: [b]}",
                                   ".namespaces: only one of Include/Exclude namespaces can be set"},
                      RejectedArgs{
                          "bad_label_selector", "labelSelector: {matchExpressions: [{key: app, operator: In}]}",
                          ".labelSelector.matchExpressions[0].values: must be specified when operator is In or NotIn"},
                      RejectedArgs{"unknown_field", "namespace: {exclude: [a]}",
                                   ".namespace: unknown field \"namespace\" (did you mean \"namespaces\"?)"},
                      RejectedArgs{"not_a_mapping", "[a]", ": must be a mapping, got a list"}),
    rejectedArgsName);

TEST(AntiAffinityArgs, UnknownArgThroughThePolicyLoader) {
  auto e = engineFor(policyWith(kName, "deschedule", "      namespace:\n        exclude: [a]\n"));
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(
      e.error().find(
          "profiles[0].pluginConfig[1].args.namespace: unknown field \"namespace\" (did you mean \"namespaces\"?)"),
      std::string::npos)
      << e.error();
}

TEST(AntiAffinityArgs, IncludeAndExcludeThroughThePolicyLoader) {
  auto e =
      engineFor(policyWith(kName, "deschedule", "      namespaces:\n        include: [a]\n        exclude: [b]\n"));
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.error().find("only one of Include/Exclude namespaces can be set"), std::string::npos) << e.error();
}

}  // namespace
}  // namespace kdesched::testing
