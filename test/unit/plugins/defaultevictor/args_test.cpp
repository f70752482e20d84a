// DefaultEvictor args: every default, every validation message, and the protections they switch on.
#include "pkg/plugins/defaultevictor/args.h"

#include <gtest/gtest.h>

#include "pkg/plugins/defaultevictor/defaultevictor.h"
#include "test/unit/plugins/args_testing.h"

namespace kdesched::testing {
namespace {

namespace de = plugins::defaultevictor;
using de::kName;
using Protections = std::set<std::string>;

Result<de::Args> decodeArgs(const policy::RawArgs& raw) {
  policy::Warnings warnings;
  return de::decodeArgs(raw, warnings);
}

const Protections kDefaultProtections = {de::kPodsWithLocalStorage, de::kSystemCriticalPods, de::kFailedBarePods,
                                         de::kDaemonSetPods};

// Builds the plugin through its registration, as the profile builder does.
Result<std::unique_ptr<framework::Plugin>> build(const std::string& yaml, bool withLookup = true) {
  framework::BuildContext ctx;
  if (withLookup) {
    ctx.priorityClassValue = [](const std::string& n) -> Result<std::int32_t> {
      if (n == "high") return 1000;
      if (n == "beyond-critical") return 2000000001;
      return Status::error("PriorityClass \"" + n + "\" not found");
    };
  }
  return de::registration().factory(rawArgs(kName, yaml), ctx);
}

TEST(DefaultEvictorArgs, Defaults) {
  auto a = decodeArgs(rawArgs(kName, ""));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->nodeSelector, "");
  EXPECT_FALSE(a->labelSelector.has_value());
  EXPECT_FALSE(a->namespaceLabelSelector.has_value());
  EXPECT_FALSE(a->priorityThresholdValue.has_value());
  EXPECT_FALSE(a->priorityThresholdName.has_value());
  EXPECT_FALSE(a->nodeFit);
  EXPECT_EQ(a->minReplicas, 0u);
  EXPECT_FALSE(a->minPodAgeSeconds.has_value());
  EXPECT_EQ(a->noEvictionPolicy, "");
  EXPECT_TRUE(a->defaultDisabled.empty());
  EXPECT_TRUE(a->extraEnabled.empty());
  EXPECT_TRUE(a->protectedStorageClasses.empty());
  EXPECT_FALSE(a->evictLocalStoragePods);
  EXPECT_FALSE(a->evictDaemonSetPods);
  EXPECT_FALSE(a->evictSystemCriticalPods);
  EXPECT_FALSE(a->evictFailedBarePods);
  EXPECT_FALSE(a->ignorePvcPods);
  EXPECT_FALSE(a->ignorePodsWithoutPDB);
  EXPECT_EQ(de::effectiveProtections(*a), kDefaultProtections);

  // Without priorityThreshold the threshold resolves to system-critical (2000000000).
  auto p = build("");
  ASSERT_TRUE(p.isOk()) << p.error();
  EXPECT_EQ(dynamic_cast<const de::DefaultEvictor&>(*p.value()).priorityThreshold(), 2000000000);
}

TEST(DefaultEvictorArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "nodeSelector: pool=general\n"
                              "labelSelector: {matchLabels: {app: web}}\n"
                              "namespaceLabelSelector: {matchLabels: {team: shop}}\n"
                              "priorityThreshold: {value: 100}\n"
                              "nodeFit: true\n"
                              "minReplicas: 2\n"
                              "minPodAge: 1h30m\n"
                              "noEvictionPolicy: Mandatory\n"
                              "podProtections:\n"
                              "  defaultDisabled: [DaemonSetPods]\n"
                              "  extraEnabled: [PodsWithPVC, PodsWithoutPDB]\n"
                              "  config: {PodsWithPVC: {protectedStorageClasses: [{name: fast}, {name: local}]}}\n"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->nodeSelector, "pool=general");
  ASSERT_TRUE(a->labelSelector.has_value());
  EXPECT_EQ(a->labelSelector->toString(), "app=web");
  ASSERT_TRUE(a->namespaceLabelSelector.has_value());
  EXPECT_EQ(a->namespaceLabelSelector->toString(), "team=shop");
  EXPECT_EQ(a->priorityThresholdValue, 100);
  EXPECT_TRUE(a->nodeFit);
  EXPECT_EQ(a->minReplicas, 2u);
  EXPECT_EQ(a->minPodAgeSeconds, 5400.0);
  EXPECT_EQ(a->noEvictionPolicy, "Mandatory");
  EXPECT_EQ(a->defaultDisabled, std::vector<std::string>{"DaemonSetPods"});
  EXPECT_EQ(a->extraEnabled, (std::vector<std::string>{"PodsWithPVC", "PodsWithoutPDB"}));
  EXPECT_EQ(a->protectedStorageClasses, (std::vector<std::string>{"fast", "local"}));
  EXPECT_EQ(de::effectiveProtections(*a), (Protections{de::kPodsWithLocalStorage, de::kSystemCriticalPods,
                                                       de::kFailedBarePods, de::kPodsWithPVC, de::kPodsWithoutPDB}));

  auto named = build("priorityThreshold: {name: high}");
  ASSERT_TRUE(named.isOk()) << named.error();
  EXPECT_EQ(dynamic_cast<const de::DefaultEvictor&>(*named.value()).priorityThreshold(), 1000);
}

// Upstream treats these as unset (its checks are `len(...) > 0`), so they load without a word.
TEST(DefaultEvictorArgs, EmptyStringsUpstreamTreatsAsUnset) {
  auto a = decodeArgs(rawArgs(kName, "priorityThreshold: {value: 100, name: \"\"}\nnoEvictionPolicy: \"\""));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->priorityThresholdValue, 100);
  EXPECT_FALSE(a->priorityThresholdName.has_value());
  EXPECT_EQ(a->noEvictionPolicy, "");
  auto p = build("priorityThreshold: {value: 100, name: \"\"}");
  ASSERT_TRUE(p.isOk()) << p.error();
  EXPECT_EQ(dynamic_cast<const de::DefaultEvictor&>(*p.value()).priorityThreshold(), 100);
}

TEST(DefaultEvictorArgs, DeprecatedBooleansAreTheLegacyFormOfPodProtections) {
  struct Case {
    const char* yaml;
    Protections want;
  };
  const std::string local = de::kPodsWithLocalStorage, critical = de::kSystemCriticalPods, bare = de::kFailedBarePods,
                    daemons = de::kDaemonSetPods;
  for (const Case& c : {
           Case{"evictLocalStoragePods: true", {critical, bare, daemons}},
           Case{"evictSystemCriticalPods: true", {local, bare, daemons}},
           Case{"evictFailedBarePods: true", {local, critical, daemons}},
           Case{"evictDaemonSetPods: true", {local, critical, bare}},
           Case{"ignorePvcPods: true", {local, critical, bare, daemons, de::kPodsWithPVC}},
           Case{"ignorePodsWithoutPDB: true", {local, critical, bare, daemons, de::kPodsWithoutPDB}},
           // false booleans next to the lists are no conflict: upstream checks only true ones.
           Case{"evictDaemonSetPods: false\npodProtections: {extraEnabled: [PodsWithResourceClaims]}",
                {local, critical, bare, daemons, de::kPodsWithResourceClaims}},
       }) {
    auto a = decodeArgs(rawArgs(kName, c.yaml));
    ASSERT_TRUE(a.isOk()) << c.yaml << ": " << a.error();
    EXPECT_EQ(de::effectiveProtections(*a), c.want) << c.yaml;
  }
}

// Without PodsWithPVC the storage class list is unused, and upstream does not check it.
TEST(DefaultEvictorArgs, AnEmptyStorageClassNameUnusedLoadsWithAWarning) {
  policy::Warnings warnings;
  auto a = de::decodeArgs(
      rawArgs(kName, "podProtections: {config: {PodsWithPVC: {protectedStorageClasses: [{name: fast}, {}]}}}"),
      warnings);
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(de::effectiveProtections(*a).count(de::kPodsWithPVC), 0u);
  EXPECT_EQ(warnings, (policy::Warnings{std::string(kArgsPath) +
                                        ".podProtections.config.PodsWithPVC.protectedStorageClasses[1].name: empty, "
                                        "accepted as upstream accepts it; unused, since PodsWithPVC protection is "
                                        "off"}));
}

// Upstream reads nodeSelector only for nodeFit, and with nodeFit fails every PreEvictionFilter on
// it (defaultevictor_test checks the refusal): either way it loads.
TEST(DefaultEvictorArgs, AnInvalidNodeSelectorLoadsWithAWarning) {
  const std::string invalid = std::string(kArgsPath) +
                              ".nodeSelector: invalid selector \"a in (b\": at position 7: found end of string, "
                              "expected: ',' or ')'; ";
  for (const auto& [yaml, consequence] : std::vector<std::pair<std::string, std::string>>{
           {"nodeSelector: 'a in (b'", "accepted as upstream accepts it, and unused without nodeFit"},
           {"nodeSelector: 'a in (b'\nnodeFit: true",
            "with nodeFit every eviction of this profile is refused on it, as upstream refuses them"}}) {
    SCOPED_TRACE(yaml);
    policy::Warnings warnings;
    auto a = de::decodeArgs(rawArgs(kName, yaml), warnings);
    ASSERT_TRUE(a.isOk()) << a.error();
    EXPECT_EQ(warnings, (policy::Warnings{invalid + consequence}));
  }
}

class DefaultEvictorArgsRejected : public ::testing::TestWithParam<RejectedArgs> {};

TEST_P(DefaultEvictorArgsRejected, WithItsMessage) {
  auto p = build(GetParam().yaml);
  EXPECT_EQ(p.isOk() ? "" : p.error(), kArgsPath + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, DefaultEvictorArgsRejected,
    ::testing::Values(
        RejectedArgs{"both_thresholds", "priorityThreshold: {value: 1, name: x}",
                     ".priorityThreshold: priority threshold misconfigured, only one of priorityThreshold fields can "
                     "be set"},
        // kdesched adds the value it got.
        // A name alone, even empty, is looked up, as upstream does (which then fails on "").
        RejectedArgs{"threshold_empty_name_alone", "priorityThreshold: {name: \"\"}",
                     ".priorityThreshold.name: PriorityClass \"\" not found"},
        RejectedArgs{"threshold_value_too_high", "priorityThreshold: {value: 2000000001}",
                     ".priorityThreshold.value: priority threshold can't be greater than 2000000000, got 2000000001"},
        RejectedArgs{"threshold_name_unknown", "priorityThreshold: {name: missing}",
                     ".priorityThreshold.name: PriorityClass \"missing\" not found"},
        RejectedArgs{"threshold_name_too_high", "priorityThreshold: {name: beyond-critical}",
                     ".priorityThreshold.name: priority threshold can't be greater than 2000000000"},
        RejectedArgs{"threshold_unknown_field", "priorityThreshold: {valeu: 1}",
                     ".priorityThreshold.valeu: unknown field \"valeu\" (did you mean \"value\"?)"},
        // kdesched adds the value it got.
        RejectedArgs{"no_eviction_policy", "noEvictionPolicy: Sometimes",
                     ".noEvictionPolicy: noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] values, got "
                     "\"Sometimes\""},
        RejectedArgs{"default_disabled_unknown", "podProtections: {defaultDisabled: [PodsWithPVC]}",
                     ".podProtections.defaultDisabled[0]: invalid pod protection policy in DefaultDisabled: "
                     "\"PodsWithPVC\". Valid options are: [PodsWithLocalStorage SystemCriticalPods FailedBarePods "
                     "DaemonSetPods]"},
        RejectedArgs{"extra_enabled_unknown", "podProtections: {extraEnabled: [PodsWithPVC, Nope]}",
                     ".podProtections.extraEnabled[1]: invalid pod protection policy in ExtraEnabled: \"Nope\". Valid "
                     "options are: [PodsWithPVC PodsWithoutPDB PodsWithResourceClaims]"},
        RejectedArgs{"default_disabled_duplicate", "podProtections: {defaultDisabled: [DaemonSetPods, DaemonSetPods]}",
                     ".podProtections.defaultDisabled: PodProtections.DefaultDisabled contains duplicate entries"},
        RejectedArgs{"extra_enabled_duplicate", "podProtections: {extraEnabled: [PodsWithPVC, PodsWithPVC]}",
                     ".podProtections.extraEnabled: PodProtections.ExtraEnabled contains duplicate entries"},
        RejectedArgs{"storage_class_without_name",
                     "podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: {protectedStorageClasses: "
                     "[{name: fast}, {}]}}}",
                     ".podProtections.config.PodsWithPVC.protectedStorageClasses[1].name: "
                     "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[1] name cannot be empty"},
        RejectedArgs{"storage_class_empty_name",
                     "podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: {protectedStorageClasses: "
                     "[{name: ''}]}}}",
                     ".podProtections.config.PodsWithPVC.protectedStorageClasses[0].name: "
                     "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[0] name cannot be empty"},
        // Upstream checks the names only with extraEnabled; with the legacy boolean it accepts the
        // empty one and then protects only the other listed classes (here none).
        RejectedArgs{"storage_class_empty_name_legacy",
                     "ignorePvcPods: true\npodProtections: {config: {PodsWithPVC: {protectedStorageClasses: [{}]}}}",
                     ".podProtections.config.PodsWithPVC.protectedStorageClasses[0].name: "
                     "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[0] name cannot be empty: with "
                     "ignorePvcPods upstream accepts it, matches no class with it and protects only the other listed "
                     "classes, so pods with a PVC of any other class become evictable"},
        RejectedArgs{"deprecated_with_lists", "evictDaemonSetPods: true\npodProtections: {extraEnabled: [PodsWithPVC]}",
                     ".podProtections: cannot use Deprecated fields alongside PodProtections.ExtraEnabled or "
                     "PodProtections.DefaultDisabled"},
        RejectedArgs{"negative_min_replicas", "minReplicas: -1",
                     ".minReplicas: must be a non-negative integer, got -1"},
        RejectedArgs{"bad_min_pod_age", "minPodAge: soon",
                     ".minPodAge: must be a duration such as \"300ms\", \"1.5h\" or \"2h45m\", got \"soon\""},
        RejectedArgs{"unknown_field", "nodeFitt: true",
                     ".nodeFitt: unknown field \"nodeFitt\" (did you mean \"nodeFit\"?)"}),
    rejectedArgsName);

TEST(DefaultEvictorArgs, ThresholdNameNeedsAPriorityClassLookup) {
  auto p = build("priorityThreshold: {name: high}", /*withLookup=*/false);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.error(), std::string(kArgsPath) + ".priorityThreshold.name: no PriorityClass lookup available");
}

}  // namespace
}  // namespace kdesched::testing
