#include "pkg/framework/profile.h"

#include <gtest/gtest.h>

#include "pkg/plugins/registry.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

std::string buildError(const std::string& yaml) {
  auto e = engineFor(yaml);
  return e.isOk() ? "" : e.error();
}

const std::string kHead = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n";

TEST(Profiles, DefaultEvictorIsInjected) {
  auto e = engineFor(kHead +
                     "profiles:\n- name: p\n  pluginConfig:\n  - name: RemovePodsViolatingInterPodAntiAffinity\n"
                     "  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n");
  ASSERT_TRUE(e.isOk()) << e.error();
  ASSERT_EQ(e->profiles.size(), 1u);
  const auto& p = e->profiles[0];
  ASSERT_EQ(p.filters.size(), 1u);
  EXPECT_EQ(p.filters[0]->name(), "DefaultEvictor");
  ASSERT_EQ(p.preEvictionFilters.size(), 1u);
  EXPECT_EQ(p.deschedule.size(), 1u);
  EXPECT_EQ(p.instances.size(), 2u);  // one instance per plugin, though DefaultEvictor serves two points
  EXPECT_EQ(p.strategyNames(), std::vector<std::string>{"RemovePodsViolatingInterPodAntiAffinity"});
}

// The injected DefaultEvictor entry goes in front of the user's entries: each plugin must still get
// its own args (with yaml-cpp's reference-assigning nodes in a vector, every entry after an insert
// used to read its neighbour's args: LowNodeUtilization got "no resource threshold is configured").
TEST(Profiles, InjectedDefaultEvictorLeavesEachPluginItsOwnArgs) {
  auto e =
      engineFor(kHead +
                "profiles:\n- name: p\n  pluginConfig:\n"
                "  - name: RemovePodsViolatingInterPodAntiAffinity\n"
                "  - name: LowNodeUtilization\n    args:\n      thresholds: {cpu: 20}\n"
                "      targetThresholds: {cpu: 50}\n"
                "  - name: RemovePodsViolatingTopologySpreadConstraint\n    args:\n"
                "      constraints: [DoNotSchedule, ScheduleAnyway]\n"
                "  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n"
                "    balance:\n      enabled: [LowNodeUtilization, RemovePodsViolatingTopologySpreadConstraint]\n");
  ASSERT_TRUE(e.isOk()) << e.error();
  EXPECT_EQ(e->profiles[0].strategyNames(),
            (std::vector<std::string>{"RemovePodsViolatingInterPodAntiAffinity", "LowNodeUtilization",
                                      "RemovePodsViolatingTopologySpreadConstraint"}));
}

TEST(Profiles, EnabledPluginNeedsPluginConfig) {
  auto err = buildError(
      kHead +
      "profiles:\n- name: p\n  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n");
  EXPECT_NE(
      err.find(
          "policy.yaml: profiles[0].plugins.deschedule.enabled[0]: plugin \"RemovePodsViolatingInterPodAntiAffinity\" "
          "is enabled but has no pluginConfig entry"),
      std::string::npos)
      << err;
}

TEST(Profiles, UnknownPluginListsKnownOnesWithSuggestion) {
  auto err = buildError(kHead +
                        "profiles:\n- name: p\n  pluginConfig:\n  - name: RemovePodsViolatingInterPodAntiAfinity\n"
                        "  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAfinity]\n");
  EXPECT_NE(err.find("profiles[0].pluginConfig[0].name: unknown plugin \"RemovePodsViolatingInterPodAntiAfinity\" "
                     "(did you mean \"RemovePodsViolatingInterPodAntiAffinity\"?); known plugins: DefaultEvictor"),
            std::string::npos)
      << err;
}

TEST(Profiles, PluginAtUnsupportedExtensionPoint) {
  auto err = buildError(kHead +
                        "profiles:\n- name: p\n  pluginConfig:\n  - name: DefaultEvictor\n"
                        "  plugins:\n    balance:\n      enabled: [DefaultEvictor]\n");
  EXPECT_NE(err.find("profiles[0].plugins.balance.enabled[0]: plugin \"DefaultEvictor\" does not implement the balance "
                     "extension point"),
            std::string::npos)
      << err;
}

TEST(Profiles, ArgsErrorsCarryTheFieldPath) {
  auto err =
      buildError(kHead +
                 "profiles:\n- name: p\n  pluginConfig:\n  - name: DefaultEvictor\n    args:\n      nodeFit: maybe\n"
                 "  plugins:\n    filter:\n      enabled: [DefaultEvictor]\n");
  EXPECT_NE(err.find("policy.yaml: profiles[0].pluginConfig[0].args.nodeFit"), std::string::npos) << err;
}

}  // namespace
}  // namespace kdesched::testing
