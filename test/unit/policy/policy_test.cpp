#include "pkg/policy/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "pkg/policy/args.h"
#include "pkg/policy/detail/yaml_value.h"

namespace kdesched::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

Result<DeschedulerPolicy> parse(const std::string& yaml) { return parsePolicy(yaml, "policy.yaml"); }

std::string header() { return "apiVersion: \"descheduler/v1alpha2\"\nkind: \"DeschedulerPolicy\"\n"; }

// ---------------------------------------------------------------------------------------------
// Valid policies, in the shapes upstream documents them.

struct ValidCase {
  std::string name;
  std::string yaml;
  std::function<void(const DeschedulerPolicy&)> check;
};

std::vector<ValidCase> validCases() {
  return {
      {"ReadmeInterPodAntiAffinity",
       R"(apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "RemovePodsViolatingInterPodAntiAffinity"
    plugins:
      deschedule:
        enabled:
          - "RemovePodsViolatingInterPodAntiAffinity"
)",
       [](const DeschedulerPolicy& p) {
         ASSERT_EQ(p.profiles.size(), 1u);
         const Profile& prof = p.profiles[0];
         EXPECT_EQ(prof.name, "ProfileName");
         EXPECT_EQ(prof.path, "profiles[0]");
         ASSERT_EQ(prof.pluginConfig.size(), 1u);
         EXPECT_EQ(prof.pluginConfig[0].name, "RemovePodsViolatingInterPodAntiAffinity");
         EXPECT_TRUE(detail::yamlOf(prof.pluginConfig[0].args).IsNull());
         EXPECT_EQ(prof.pluginConfig[0].args.path, "profiles[0].pluginConfig[0].args");
         EXPECT_THAT(prof.plugins.deschedule.enabled, ElementsAre("RemovePodsViolatingInterPodAntiAffinity"));
         EXPECT_THAT(prof.plugins.balance.enabled, IsEmpty());
         EXPECT_FALSE(p.nodeSelector.has_value());
         EXPECT_FALSE(p.maxNoOfPodsToEvictPerNode.has_value());
         EXPECT_FALSE(p.gracePeriodSeconds.has_value());
         EXPECT_EQ(p.sourceName, "policy.yaml");
       }},
      {"ReadmeNodeAffinity",
       R"(apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "RemovePodsViolatingNodeAffinity"
      args:
        nodeAffinityType:
        - "requiredDuringSchedulingIgnoredDuringExecution"
    plugins:
      deschedule:
        enabled:
          - "RemovePodsViolatingNodeAffinity"
)",
       [](const DeschedulerPolicy& p) {
         ASSERT_EQ(p.profiles.size(), 1u);
         const PluginConfig* cfg = p.profiles[0].findConfig("RemovePodsViolatingNodeAffinity");
         ASSERT_NE(cfg, nullptr);
         ArgsReader r(cfg->args);
         std::optional<std::vector<std::string>> types;
         ASSERT_TRUE(r.readStringList("nodeAffinityType", types).isOk());
         EXPECT_THAT(*types, ElementsAre("requiredDuringSchedulingIgnoredDuringExecution"));
         EXPECT_TRUE(r.finish().isOk());
       }},
      {"ReadmeLowNodeUtilization",
       R"(apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "LowNodeUtilization"
      args:
        thresholds:
          "cpu" : 20
          "memory": 20
          "pods": 20
        targetThresholds:
          "cpu" : 50
          "memory": 50
          "pods": 50
    plugins:
      balance:
        enabled:
          - "LowNodeUtilization"
)",
       [](const DeschedulerPolicy& p) {
         const PluginConfig* cfg = p.profiles.at(0).findConfig("LowNodeUtilization");
         ASSERT_NE(cfg, nullptr);
         ArgsReader r(cfg->args);
         std::optional<ResourceThresholds> low, high;
         ASSERT_TRUE(r.readResourceThresholds("thresholds", low).isOk());
         ASSERT_TRUE(r.readResourceThresholds("targetThresholds", high).isOk());
         EXPECT_EQ(low, (ResourceThresholds{{"cpu", 20}, {"memory", 20}, {"pods", 20}}));
         EXPECT_EQ(high, (ResourceThresholds{{"cpu", 50}, {"memory", 50}, {"pods", 50}}));
         EXPECT_THAT(p.profiles[0].plugins.balance.enabled, ElementsAre("LowNodeUtilization"));
       }},
      {"ReadmeTopologySpread",
       R"(apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "RemovePodsViolatingTopologySpreadConstraint"
      args:
        constraints:
          - DoNotSchedule
    plugins:
      balance:
        enabled:
          - "RemovePodsViolatingTopologySpreadConstraint"
)",
       [](const DeschedulerPolicy& p) {
         EXPECT_THAT(p.profiles.at(0).plugins.balance.enabled,
                     ElementsAre("RemovePodsViolatingTopologySpreadConstraint"));
         EXPECT_NE(p.profiles[0].findConfig("RemovePodsViolatingTopologySpreadConstraint"), nullptr);
         EXPECT_EQ(p.profiles[0].findConfig("LowNodeUtilization"), nullptr);
       }},
      {"HelmChartDefault",
       R"(apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: default
    pluginConfig:
      - name: DefaultEvictor
        args:
          podProtections:
            defaultDisabled:
              - "PodsWithLocalStorage"
            extraEnabled:
              - "PodsWithPVC"
      - name: RemoveDuplicates
      - name: RemovePodsHavingTooManyRestarts
        args:
          podRestartThreshold: 100
          includingInitContainers: true
      - name: RemovePodsViolatingNodeAffinity
        args:
          nodeAffinityType:
          - requiredDuringSchedulingIgnoredDuringExecution
      - name: RemovePodsViolatingNodeTaints
      - name: RemovePodsViolatingInterPodAntiAffinity
      - name: RemovePodsViolatingTopologySpreadConstraint
      - name: LowNodeUtilization
        args:
          thresholds:
            cpu: 20
            memory: 20
            pods: 20
          targetThresholds:
            cpu: 50
            memory: 50
            pods: 50
    plugins:
      balance:
        enabled:
          - RemoveDuplicates
          - RemovePodsViolatingTopologySpreadConstraint
          - LowNodeUtilization
      deschedule:
        enabled:
          - RemovePodsHavingTooManyRestarts
          - RemovePodsViolatingNodeTaints
          - RemovePodsViolatingNodeAffinity
          - RemovePodsViolatingInterPodAntiAffinity
)",
       [](const DeschedulerPolicy& p) {
         ASSERT_EQ(p.profiles.size(), 1u);
         const Profile& prof = p.profiles[0];
         ASSERT_EQ(prof.pluginConfig.size(), 8u);
         EXPECT_EQ(prof.pluginConfig[7].args.path, "profiles[0].pluginConfig[7].args");
         EXPECT_THAT(
             prof.plugins.balance.enabled,
             ElementsAre("RemoveDuplicates", "RemovePodsViolatingTopologySpreadConstraint", "LowNodeUtilization"));
         EXPECT_THAT(prof.plugins.deschedule.enabled,
                     ElementsAre("RemovePodsHavingTooManyRestarts", "RemovePodsViolatingNodeTaints",
                                 "RemovePodsViolatingNodeAffinity", "RemovePodsViolatingInterPodAntiAffinity"));
         EXPECT_TRUE(detail::yamlOf(prof.findConfig("RemoveDuplicates")->args).IsNull());
         EXPECT_TRUE(detail::yamlOf(prof.findConfig("DefaultEvictor")->args).IsMap());
       }},
      {"ReadmeTopLevelFields", header() + R"(nodeSelector: "node=node1"
maxNoOfPodsToEvictPerNode: 5000
maxNoOfPodsToEvictPerNamespace: 5000
maxNoOfPodsToEvictTotal: 5000
evictionFailureEventNotification: true
gracePeriodSeconds: 60
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "DefaultEvictor"
      args:
        evictSystemCriticalPods: true
        nodeFit: true
    plugins:
      filter:
        enabled:
          - "DefaultEvictor"
      preEvictionFilter:
        enabled:
          - "DefaultEvictor"
)",
       [](const DeschedulerPolicy& p) {
         EXPECT_EQ(p.nodeSelector, "node=node1");
         EXPECT_TRUE(p.nodeSelectorParsed.has_value());
         EXPECT_EQ(p.maxNoOfPodsToEvictPerNode, 5000u);
         EXPECT_EQ(p.maxNoOfPodsToEvictPerNamespace, 5000u);
         EXPECT_EQ(p.maxNoOfPodsToEvictTotal, 5000u);
         EXPECT_EQ(p.evictionFailureEventNotification, true);
         EXPECT_EQ(p.gracePeriodSeconds, 60);
         EXPECT_THAT(p.profiles.at(0).plugins.filter.enabled, ElementsAre("DefaultEvictor"));
         EXPECT_THAT(p.profiles[0].plugins.preEvictionFilter.enabled, ElementsAre("DefaultEvictor"));
       }},
      {"LowerCasePreevictionfilter", header() + R"(profiles:
  - name: p
    pluginConfig:
    - name: DefaultEvictor
    plugins:
      preevictionfilter:
        enabled: [DefaultEvictor]
        disabled: [Other]
)",
       [](const DeschedulerPolicy& p) {
         EXPECT_THAT(p.profiles.at(0).plugins.preEvictionFilter.enabled, ElementsAre("DefaultEvictor"));
         EXPECT_THAT(p.profiles[0].plugins.preEvictionFilter.disabled, ElementsAre("Other"));
       }},
      {"PresortAndSortAreParsedAndIgnored", header() + R"(profiles:
  - name: p
    plugins:
      presort:
        enabled: [SomeSorter]
      sort:
        enabled: [SomeSorter]
        disabled: ["*"]
      deschedule:
        enabled: [PodLifeTime]
)",
       [](const DeschedulerPolicy& p) {
         const Plugins& pl = p.profiles.at(0).plugins;
         EXPECT_THAT(pl.deschedule.enabled, ElementsAre("PodLifeTime"));
         EXPECT_THAT(pl.balance.enabled, IsEmpty());
         EXPECT_THAT(pl.filter.enabled, IsEmpty());
         EXPECT_THAT(pl.preEvictionFilter.enabled, IsEmpty());
       }},
      {"SeveralProfilesKeepTheirOrder", header() + R"(profiles:
  - name: b
    pluginConfig: [{name: X}, {name: Z, args: {a: 1}}]
  - name: a
    pluginConfig: [{name: X}]
  - name: c
)",
       [](const DeschedulerPolicy& p) {
         ASSERT_EQ(p.profiles.size(), 3u);
         EXPECT_EQ(p.profiles[0].name, "b");
         EXPECT_EQ(p.profiles[1].name, "a");
         EXPECT_EQ(p.profiles[2].name, "c");
         EXPECT_EQ(p.profiles[2].path, "profiles[2]");
         EXPECT_EQ(p.profiles[0].findConfig("Z")->args.path, "profiles[0].pluginConfig[1].args");
         EXPECT_EQ(p.profiles[1].findConfig("Z"), nullptr);
       }},
      {"NoProfilesIsAValidNoOp", header(), [](const DeschedulerPolicy& p) { EXPECT_THAT(p.profiles, IsEmpty()); }},
      {"DisabledMetricsAreHarmless",
       header() + "metricsCollector:\n  enabled: false\nmetricsProviders: []\nprometheus: {}\ntracing:\nprofiles: []\n",
       [](const DeschedulerPolicy& p) { EXPECT_THAT(p.profiles, IsEmpty()); }},
      {"DocumentMarkersAndYaml11Booleans",
       "---\n" + header() + "evictionFailureEventNotification: yes\nmaxNoOfPodsToEvictTotal: 1_000\n---\n",
       [](const DeschedulerPolicy& p) {
         EXPECT_EQ(p.evictionFailureEventNotification, true);
         EXPECT_EQ(p.maxNoOfPodsToEvictTotal, 1000u);
       }},
      {"EmptyNodeSelectorSelectsEverything", header() + "nodeSelector: \"\"\n",
       [](const DeschedulerPolicy& p) {
         EXPECT_EQ(p.nodeSelector, "");
         ASSERT_TRUE(p.nodeSelectorParsed.has_value());
         EXPECT_TRUE(p.nodeSelectorParsed->empty());
       }},
  };
}

TEST(ParsePolicyTest, ValidPolicies) {
  for (const ValidCase& c : validCases()) {
    SCOPED_TRACE(c.name);
    Result<DeschedulerPolicy> r = parse(c.yaml);
    ASSERT_TRUE(r.isOk()) << r.error();
    c.check(*r);
  }
}

// ---------------------------------------------------------------------------------------------
// Invalid policies: each message is what the operator reads, so it is asserted exactly.

struct ErrorCase {
  std::string name;
  std::string yaml;
  std::string error;
};

std::vector<ErrorCase> errorCases() {
  const std::string profileHead = header() + "profiles:\n  - name: p\n";
  return {
      {"NotAMappingList", "- a\n- b\n",
       "policy.yaml: the policy must be a mapping with apiVersion, kind and profiles, got a list"},
      {"NotAMappingScalar", "hello",
       "policy.yaml: the policy must be a mapping with apiVersion, kind and profiles, got \"hello\""},
      {"WrongApiVersion", "apiVersion: v1\nkind: DeschedulerPolicy\n",
       "policy.yaml: apiVersion: must be descheduler/v1alpha2, got \"v1\""},
      {"ApiVersionNotAString", "apiVersion: 2\nkind: DeschedulerPolicy\n",
       "policy.yaml: apiVersion: must be a string (quote it: \"2\"), got 2"},
      {"V1alpha1",
       "apiVersion: \"descheduler/v1alpha1\"\nkind: \"DeschedulerPolicy\"\nstrategies:\n  LowNodeUtilization:\n"
       "    enabled: true\n",
       "policy.yaml: apiVersion: descheduler/v1alpha1 is not supported: rewrite the policy as descheduler/v1alpha2 "
       "(strategies become profiles[].plugins and pluginConfig)"},
      {"WrongKind", "apiVersion: descheduler/v1alpha2\nkind: Policy\n",
       "policy.yaml: kind: must be DeschedulerPolicy, got \"Policy\""},
      {"MalformedYamlUnclosedFlow", header() + "profiles: [a, b\nnodeSelector: x\n",
       "policy.yaml: line 4, column 13: malformed YAML: end of sequence flow not found"},
      {"MalformedYamlBadIndent", header() + "profiles:\n  - name: a\n   pluginConfig: []\n",
       "policy.yaml: line 5, column 4: malformed YAML: end of sequence not found"},
      {"MalformedYamlTab", header() + "profiles:\n\t- name: a\n",
       "policy.yaml: line 4, column 2: malformed YAML: illegal block entry"},
      {"TwoDocuments", header() + "---\n" + header(),
       "policy.yaml: line 4: a second YAML document (after ---); a policy file holds exactly one "
       "DeschedulerPolicy"},
      {"DuplicateTopLevelKey", header() + "maxNoOfPodsToEvictTotal: 5\nmaxNoOfPodsToEvictTotal: 50\n",
       "policy.yaml: maxNoOfPodsToEvictTotal: duplicate key, set on line 3 and again on line 4"},
      {"DuplicateKeyInProfile", header() + "profiles:\n  - name: a\n    name: b\n",
       "policy.yaml: profiles[0].name: duplicate key, set on line 4 and again on line 5"},
      {"DuplicateKeyInPlugins",
       profileHead + "    plugins:\n      balance: {enabled: [A]}\n      balance: {enabled: [B]}\n",
       "policy.yaml: profiles[0].plugins.balance: duplicate key, set on line 6 and again on line 7"},
      {"NegativeLimit", header() + "maxNoOfPodsToEvictPerNode: -1\n",
       "policy.yaml: maxNoOfPodsToEvictPerNode: must be a non-negative integer, got -1"},
      {"NegativeNamespaceLimit", header() + "maxNoOfPodsToEvictPerNamespace: -3\n",
       "policy.yaml: maxNoOfPodsToEvictPerNamespace: must be a non-negative integer, got -3"},
      {"QuotedLimit", header() + "maxNoOfPodsToEvictTotal: \"5\"\n",
       "policy.yaml: maxNoOfPodsToEvictTotal: must be a non-negative integer, got \"5\""},
      {"HugeLimit", header() + "maxNoOfPodsToEvictTotal: 18446744073709551616\n",
       "policy.yaml: maxNoOfPodsToEvictTotal: must be at most 18446744073709551615, got 18446744073709551616"},
      {"GracePeriodNotANumber", header() + "gracePeriodSeconds: 30s\n",
       "policy.yaml: gracePeriodSeconds: must be an integer, got \"30s\""},
      {"EventNotificationNotABool", header() + "evictionFailureEventNotification: sometimes\n",
       "policy.yaml: evictionFailureEventNotification: must be true or false, got \"sometimes\""},
      {"NodeSelectorAsMap", header() + "nodeSelector:\n  node-role.kubernetes.io/worker: \"\"\n",
       "policy.yaml: nodeSelector: must be a string, got a mapping"},
      {"UnknownTopLevelKeyDidYouMean", header() + "maxNoOfPodsToEvictPerNod: 5\n",
       "policy.yaml: maxNoOfPodsToEvictPerNod: unknown field \"maxNoOfPodsToEvictPerNod\" (did you mean "
       "\"maxNoOfPodsToEvictPerNode\"?)"},
      {"MetricsCollectorNotABool", header() + "metricsCollector:\n  enabled: yes please\n",
       "policy.yaml: metricsCollector.enabled: must be true or false, got \"yes please\""},
      {"ProfilesNotAList", header() + "profiles:\n  name: p\n", "policy.yaml: profiles: must be a list, got a mapping"},
      {"ProfileNotAMapping", header() + "profiles:\n  - p\n", "policy.yaml: profiles[0]: must be a mapping, got \"p\""},
      // Upstream's YAML reader (go-yaml v2) takes a bare `no` for false, so this fails there too.
      {"Yaml11BooleanAsName", header() + "profiles:\n  - name: no\n",
       "policy.yaml: profiles[0].name: must be a string (quote it: \"no\"), got no"},
      {"PluginConfigWithoutName", profileHead + "    pluginConfig:\n      - args: {a: 1}\n",
       "policy.yaml: profiles[0].pluginConfig[0].name: missing; every pluginConfig entry needs the plugin's name"},
      {"DuplicatePluginConfig",
       profileHead + "    pluginConfig:\n      - name: A\n      - name: B\n      - name: A\n        args: {x: 1}\n",
       "policy.yaml: profiles[0].pluginConfig[2].name: duplicate pluginConfig for this plugin (also at "
       "profiles[0].pluginConfig[0]), got \"A\""},
      {"PluginConfigTypo", profileHead + "    pluginConfig:\n      - name: A\n        arg: {x: 1}\n",
       "policy.yaml: profiles[0].pluginConfig[0].arg: unknown field \"arg\" (did you mean \"args\"?)"},
      {"PluginNameNotAString", profileHead + "    plugins:\n      deschedule:\n        enabled: [A, 5]\n",
       "policy.yaml: profiles[0].plugins.deschedule.enabled[1]: must be a string (quote it: \"5\"), got 5"},
      {"EmptyPluginName", profileHead + "    plugins:\n      deschedule:\n        enabled: [A, \"\"]\n",
       "policy.yaml: profiles[0].plugins.deschedule.enabled[1]: must be a plugin name, got \"\""},
      {"EnabledNotAList", profileHead + "    plugins:\n      balance:\n        enabled: LowNodeUtilization\n",
       "policy.yaml: profiles[0].plugins.balance.enabled: must be a list of strings, got \"LowNodeUtilization\""},
      {"MergeKey", header() + "<<: {maxNoOfPodsToEvictTotal: 1}\n",
       "policy.yaml: \"<<\": YAML merge keys are not supported: write the fields out in full"},
  };
}

TEST(ParsePolicyTest, Errors) {
  for (const ErrorCase& c : errorCases()) {
    SCOPED_TRACE(c.name);
    Result<DeschedulerPolicy> r = parse(c.yaml);
    ASSERT_FALSE(r.isOk()) << c.name << " parsed";
    EXPECT_EQ(r.error(), c.error);
  }
}

TEST(ParsePolicyTest, InvalidNodeSelectorNamesTheField) {
  // The parse error's wording belongs to pkg/api; the field is ours.
  Result<DeschedulerPolicy> r = parse(header() + "nodeSelector: \"zone in (a\"\n");
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.error(), StartsWith("policy.yaml: nodeSelector: "));
  EXPECT_THAT(r.error(), HasSubstr("\"zone in (a\""));
  Result<DeschedulerPolicy> ok = parse(header() + "nodeSelector: \"topology.kubernetes.io/zone in (a,b),!legacy\"\n");
  ASSERT_TRUE(ok.isOk()) << ok.error();
  EXPECT_EQ(ok->nodeSelectorParsed->matchExpressions.size(), 2u);
}

TEST(ParsePolicyTest, ArgsAreKeptRawForThePluginRegistry) {
  // Plugin names and args are not validated here: a misspelt plugin or arg is the registry's to
  // report, with the path recorded now.
  Result<DeschedulerPolicy> r = parse(header() + R"(profiles:
  - name: p
    pluginConfig:
      - name: NoSuchPlugin
        args: {tresholds: {cpu: abc}}
      - name: Other
        args: [not, a, mapping]
    plugins:
      balance: {enabled: [NoSuchPlugin]}
)");
  ASSERT_TRUE(r.isOk()) << r.error();
  const PluginConfig* cfg = r->profiles[0].findConfig("NoSuchPlugin");
  ASSERT_NE(cfg, nullptr);
  ArgsReader args(cfg->args);
  std::optional<ResourceThresholds> t;
  ASSERT_TRUE(args.readResourceThresholds("thresholds", t).isOk());
  EXPECT_EQ(args.finish().message(),
            "profiles[0].pluginConfig[0].args.tresholds: unknown field \"tresholds\" (did you mean \"thresholds\"?)");
  ArgsReader other(r->profiles[0].findConfig("Other")->args);
  EXPECT_EQ(other.structural().message(), "profiles[0].pluginConfig[1].args: must be a mapping, got a list");
}

}  // namespace
}  // namespace kdesched::policy
