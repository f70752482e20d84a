// RemovePodsViolatingNodeAffinity args: every default, every validation message and every warning.
#include "pkg/plugins/nodeaffinity/args.h"

#include <gmock/gmock.h>
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

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(NodeAffinityArgs, DefaultsListEveryPod) {
  policy::Warnings warnings;
  auto a = decodeArgs(rawArgs(kName, "nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]"), warnings);
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->nodeAffinityType, std::vector<std::string>{kRequired});
  EXPECT_FALSE(a->filter.namespaces.has_value());
  EXPECT_FALSE(a->filter.labelSelector.has_value());
  EXPECT_TRUE(a->filter.allows(*PodBuilder("p", "any").build()));
  EXPECT_THAT(warnings, IsEmpty());
}

TEST(NodeAffinityArgs, ReadsEveryFieldAndKeepsTheTypesInOrder) {
  policy::Warnings warnings;
  auto a = decodeArgs(rawArgs(kName,
                              "nodeAffinityType:\n"
                              "- preferredDuringSchedulingIgnoredDuringExecution\n"
                              "- requiredDuringSchedulingIgnoredDuringExecution\n"
                              "namespaces: {include: [shop]}\n"
                              "labelSelector: {matchLabels: {app: web}}"),
                      warnings);
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

// Upstream accepts any value at load and, each cycle, logs and skips the ones it does not know:
// kdesched skips them once, at load, with a warning, and runs the known ones.
struct SkippedTypes {
  std::string name;
  std::string yaml;
  std::vector<std::string> kept;
  std::vector<std::string> warnings;  // each after kArgsPath
};

void PrintTo(const SkippedTypes& c, std::ostream* os) { *os << c.name; }

class NodeAffinityArgsSkipped : public ::testing::TestWithParam<SkippedTypes> {};

TEST_P(NodeAffinityArgsSkipped, WithAWarning) {
  const SkippedTypes& c = GetParam();
  policy::Warnings warnings;
  auto a = decodeArgs(rawArgs(kName, c.yaml), warnings);
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->nodeAffinityType, c.kept);
  std::vector<std::string> want;
  for (const std::string& w : c.warnings) want.push_back(kArgsPath + w);
  EXPECT_EQ(warnings, want);
}

const std::string kSkipped = "\", skipped (upstream logs \"Invalid nodeAffinityType\" each cycle and skips it too)";
const std::string kNothing =
    ".nodeAffinityType: no known value (requiredDuringSchedulingIgnoredDuringExecution or "
    "preferredDuringSchedulingIgnoredDuringExecution), so RemovePodsViolatingNodeAffinity evicts nothing here, as "
    "upstream";

INSTANTIATE_TEST_SUITE_P(
    Table, NodeAffinityArgsSkipped,
    ::testing::Values(
        SkippedTypes{"typo_next_to_a_known_one",
                     "nodeAffinityType: [preferredDuringSchedulingIgnoredDuringExecution, "
                     "requiredDuringSchedulingIgnoredDuringExecutio]",
                     {kPreferred},
                     {".nodeAffinityType[1]: unknown value \"requiredDuringSchedulingIgnoredDuringExecutio" + kSkipped +
                      "; did you mean \"requiredDuringSchedulingIgnoredDuringExecution\"?"}},
        SkippedTypes{"far_from_any",
                     "nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution, sometimes]",
                     {kRequired},
                     {".nodeAffinityType[1]: unknown value \"sometimes" + kSkipped}},
        SkippedTypes{"case_differs",
                     "nodeAffinityType: [RequiredDuringSchedulingIgnoredDuringExecution]",
                     {},
                     {".nodeAffinityType[0]: unknown value \"RequiredDuringSchedulingIgnoredDuringExecution" +
                          kSkipped + "; did you mean \"requiredDuringSchedulingIgnoredDuringExecution\"?",
                      kNothing}},
        SkippedTypes{"empty_string",
                     "nodeAffinityType: [\"\"]",
                     {},
                     {".nodeAffinityType[0]: unknown value \"" + kSkipped, kNothing}}),
    [](const ::testing::TestParamInfo<SkippedTypes>& info) { return info.param.name; });

TEST(NodeAffinityArgs, ThroughThePolicyLoader) {
  auto missing = engineFor(policyWith(kName, "deschedule", "      namespaces:\n        exclude: [x]\n"));
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.error().find("profiles[0].pluginConfig[1].args.nodeAffinityType: nodeAffinityType needs to be set"),
            std::string::npos)
      << missing.error();
  // The warning reaches the policy's warnings (logged at start, printed by `plan`), with the file.
  auto skipped = engineFor(policyWith(kName, "deschedule", "      nodeAffinityType: [sometimes]\n"));
  ASSERT_TRUE(skipped.isOk()) << skipped.error();
  EXPECT_THAT(skipped->policy.warnings,
              ElementsAre("policy.yaml: profiles[0].pluginConfig[1].args.nodeAffinityType[0]: unknown value "
                          "\"sometimes" +
                              kSkipped,
                          "policy.yaml: profiles[0].pluginConfig[1].args" + kNothing));
}

}  // namespace
}  // namespace kdesched::testing
