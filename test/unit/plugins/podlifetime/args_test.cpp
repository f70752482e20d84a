// PodLifeTime args: every default and every validation message.
#include "pkg/plugins/podlifetime/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using plugins::podlifetime::decodeArgs;
using plugins::podlifetime::kName;

TEST(PodLifeTimeArgs, Defaults) {
  auto a = decodeArgs(rawArgs(kName, "maxPodLifeTimeSeconds: 86400"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->maxPodLifeTimeSeconds, std::optional<std::uint64_t>(86400));
  EXPECT_TRUE(a->states.empty());
  EXPECT_TRUE(a->conditions.empty());
  EXPECT_TRUE(a->exitCodes.empty());
  EXPECT_TRUE(a->ownerKindsInclude.empty());
  EXPECT_TRUE(a->ownerKindsExclude.empty());
  EXPECT_FALSE(a->includingInitContainers);
  EXPECT_FALSE(a->includingEphemeralContainers);
  EXPECT_FALSE(a->filter.namespaces.has_value());
  EXPECT_FALSE(a->filter.labelSelector.has_value());
}

TEST(PodLifeTimeArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "maxPodLifeTimeSeconds: 0\n"
                              "states: [Pending, CrashLoopBackOff]\n"
                              "conditions:\n"
                              "- {type: Ready, status: \"False\", reason: R, minTimeSinceLastTransitionSeconds: 60}\n"
                              "- {status: Unknown}\n"
                              "exitCodes: [137, -1]\n"
                              "ownerKinds: {exclude: [Job]}\n"
                              "includingInitContainers: true\n"
                              "includingEphemeralContainers: true\n"
                              "namespaces: {exclude: [kube-system]}\n"
                              "labelSelector: {matchLabels: {app: web}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->maxPodLifeTimeSeconds, std::optional<std::uint64_t>(0));
  EXPECT_EQ(a->states, (std::vector<std::string>{"Pending", "CrashLoopBackOff"}));
  ASSERT_EQ(a->conditions.size(), 2u);
  EXPECT_EQ(a->conditions[0].type, "Ready");
  EXPECT_EQ(a->conditions[0].status, "False");
  EXPECT_EQ(a->conditions[0].reason, "R");
  EXPECT_EQ(a->conditions[0].minTimeSinceLastTransitionSeconds, std::optional<std::uint64_t>(60));
  EXPECT_EQ(a->conditions[1].status, "Unknown");
  EXPECT_FALSE(a->conditions[1].minTimeSinceLastTransitionSeconds.has_value());
  EXPECT_EQ(a->exitCodes, (std::vector<std::int32_t>{137, -1}));
  EXPECT_EQ(a->ownerKindsExclude, std::vector<std::string>{"Job"});
  EXPECT_TRUE(a->includingInitContainers);
  EXPECT_TRUE(a->includingEphemeralContainers);
  ASSERT_TRUE(a->filter.namespaces.has_value());
  EXPECT_EQ(a->filter.namespaces->exclude, std::vector<std::string>{"kube-system"});
  ASSERT_TRUE(a->filter.labelSelector.has_value());
}

TEST(PodLifeTimeArgs, EachCriterionAloneIsEnough) {
  for (const char* y : {"maxPodLifeTimeSeconds: 1", "states: [Failed]", "conditions: [{type: Ready}]",
                        "conditions: [{minTimeSinceLastTransitionSeconds: 0}]", "exitCodes: [0]"})
    EXPECT_EQ(decodeError(decodeArgs, kName, y), "") << y;
}

class PodLifeTimeArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(PodLifeTimeArgsRejected, WithItsMessage) {
  EXPECT_EQ(decodeError(decodeArgs, kName, GetParam().yaml), kArgsPath + GetParam().error);
}

const std::string kNoCriterion =
    ": at least one filtering criterion must be specified (maxPodLifeTimeSeconds, states, conditions, or exitCodes)";

INSTANTIATE_TEST_SUITE_P(
    Table, PodLifeTimeArgsRejected,
    ::testing::Values(
        RejectedArgs{"no_args", "", kNoCriterion},
        RejectedArgs{"only_filters", "namespaces: {include: [a]}\nincludingInitContainers: true", kNoCriterion},
        RejectedArgs{"empty_lists", "states: []\nconditions: []\nexitCodes: []", kNoCriterion},
        RejectedArgs{"negative_max", "maxPodLifeTimeSeconds: -1",
                     ".maxPodLifeTimeSeconds: must be a non-negative integer, got -1"},
        RejectedArgs{"max_not_a_number", "maxPodLifeTimeSeconds: 1h",
                     ".maxPodLifeTimeSeconds: must be an integer, got \"1h\""},
        RejectedArgs{"unknown_state", "states: [Running, Sleeping]",
                     ".states[1]: states must be one of [Completed ContainerCannotRun "
                     "ContainerCreating CrashLoopBackOff CreateContainerConfigError CreateContainerError "
                     "DeadlineExceeded ErrImagePull "
                     "Error Evicted Failed ImagePullBackOff InvalidImageName NodeAffinity NodeLost OOMKilled Pending "
                     "PodInitializing Running Shutdown StartError Succeeded UnexpectedAdmissionError Unknown], got "
                     "\"Sleeping\""},
        RejectedArgs{"empty_condition", "conditions: [{type: Ready}, {}]",
                     ".conditions[1]: at least one of type, status, reason, or minTimeSinceLastTransitionSeconds "
                     "must be set"},
        RejectedArgs{"negative_min_time", "conditions: [{type: Ready, minTimeSinceLastTransitionSeconds: -5}]",
                     ".conditions[0].minTimeSinceLastTransitionSeconds: must be a non-negative integer, got -5"},
        RejectedArgs{"unknown_condition_field", "conditions: [{typ: Ready}]",
                     ".conditions[0].typ: unknown field \"typ\" (did you mean \"type\"?)"},
        RejectedArgs{"exit_code_out_of_range", "exitCodes: [1, 4294967296]",
                     ".exitCodes[1]: must be an integer between -2147483648 and 2147483647, got 4294967296"},
        RejectedArgs{"owner_kinds_both",
                     "maxPodLifeTimeSeconds: 1\nownerKinds: {include: [Job], exclude: [ReplicaSet]}",
                     ".ownerKinds: only one of Include/Exclude ownerKinds can be set"},
        RejectedArgs{"namespaces_both", "maxPodLifeTimeSeconds: 1\nnamespaces: {include: [a], exclude: [b]}",
                     ".namespaces: only one of Include/Exclude namespaces can be set"},
        RejectedArgs{"bad_label_selector",
                     "maxPodLifeTimeSeconds: 1\nlabelSelector: {matchExpressions: [{key: app, operator: Near}]}",
                     ".labelSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, "
                     "got \"Near\""},
        RejectedArgs{"including_init_not_bool", "maxPodLifeTimeSeconds: 1\nincludingInitContainers: yes please",
                     ".includingInitContainers: must be true or false, got \"yes please\""},
        RejectedArgs{"unknown_field", "maxPodLifetimeSeconds: 1",
                     ".maxPodLifetimeSeconds: unknown field \"maxPodLifetimeSeconds\" (did you mean "
                     "\"maxPodLifeTimeSeconds\"?)"}),
    rejectedArgsName);

TEST(PodLifeTimeArgs, ThroughThePolicyLoader) {
  auto bad = engineFor(policyWith(kName, "deschedule", "      states: [Sleeping]\n"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.error().find("profiles[0].pluginConfig[1].args.states[0]: states must be one of"), std::string::npos)
      << bad.error();
  EXPECT_TRUE(engineFor(policyWith(kName, "deschedule", "      maxPodLifeTimeSeconds: 60\n")).isOk());
}

}  // namespace
}  // namespace kdesched::testing
