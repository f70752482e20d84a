// RemoveDuplicates args: every default and every validation message.
#include "pkg/plugins/removeduplicates/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::removeduplicates::decodeArgs;
using plugins::removeduplicates::kName;

TEST(RemoveDuplicatesArgs, DefaultsConsiderEveryOwnerInEveryNamespace) {
  auto a = decodeArgs(rawArgs(kName, ""));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_TRUE(a->excludeOwnerKinds.empty());
  EXPECT_FALSE(a->namespaces.has_value());
}

TEST(RemoveDuplicatesArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName, "excludeOwnerKinds: [ReplicaSet, Job]\nnamespaces: {exclude: [kube-system]}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->excludeOwnerKinds, (std::vector<std::string>{"ReplicaSet", "Job"}));
  ASSERT_TRUE(a->namespaces.has_value());
  EXPECT_EQ(a->namespaces->exclude, std::vector<std::string>{"kube-system"});
  EXPECT_TRUE(a->namespaces->include.empty());
}

class RemoveDuplicatesArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(RemoveDuplicatesArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RemoveDuplicatesArgsRejected,
    ::testing::Values(
        RejectedArgs{"include_and_exclude_namespaces", "namespaces: {include: [a], exclude: [b]}",
                     ".namespaces: only one of Include/Exclude namespaces can be set"},
        RejectedArgs{"kinds_not_a_list", "excludeOwnerKinds: ReplicaSet",
                     ".excludeOwnerKinds: must be a list of strings, got \"ReplicaSet\""},
        RejectedArgs{"label_selector_is_not_an_arg", "labelSelector: {matchLabels: {app: web}}",
                     ".labelSelector: unknown field \"labelSelector\" (known fields: namespaces, excludeOwnerKinds)"},
        RejectedArgs{"unknown_field", "excludeOwnerKind: [Job]",
                     ".excludeOwnerKind: unknown field \"excludeOwnerKind\" (did you mean "
                     "\"excludeOwnerKinds\"?)"}),
    rejectedArgsName);

TEST(RemoveDuplicatesArgs, ThroughThePolicyLoader) {
  auto bad = engineFor(policyWith(kName, "balance", "      namespaces: {include: [a], exclude: [b]}\n"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("profiles[0].pluginConfig[1].args.namespaces: only one of Include/Exclude namespaces "
                             "can be set"),
            std::string::npos)
      << bad.error();
}

}  // namespace
}  // namespace kdesched::testing
