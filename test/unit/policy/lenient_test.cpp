// The drop-in rule at load time: a policy upstream v0.36 accepts loads here too and means the same
// (a warning says what was ignored or read differently from how it looks), except input upstream
// silently misreads in a way that can evict more than asked, which stays an error with a
// did-you-mean. Each relaxed case is run through the real engine over one small cluster, and the
// plan is what upstream would evict.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

constexpr api::Timestamp kNow = 100000;  // the harness's pinned wall clock

// One PodLifeTime profile, limited to namespace `shop`; each field adds lines at one level or
// renames one key, so a case reads as its difference from that policy.
struct Parts {
  std::string top = "";      // top-level lines
  std::string profile = "";  // lines in profiles[0], indented 2
  std::string entry = "";    // lines in the PodLifeTime pluginConfig entry, indented 4
  std::string args = "";     // lines in its args, indented 6
  std::string evictor = "";  // DefaultEvictor args (pluginConfig[1] when set), indented 6
  std::string plugins = "";  // lines under plugins, indented 4
  std::string set = "";      // lines under plugins.deschedule, indented 6
  std::string more = "";     // profiles after profiles[0]
  std::string argsKey = "args";
  std::string descheduleKey = "deschedule";
  std::string enabledKey = "enabled";
};

std::string policyText(const Parts& p) {
  std::string y = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n" + p.top;
  y += "profiles:\n- name: p\n" + p.profile;
  y += "  pluginConfig:\n  - name: PodLifeTime\n" + p.entry;
  y += "    " + p.argsKey + ":\n      maxPodLifeTimeSeconds: 3600\n      namespaces: {include: [shop]}\n" + p.args;
  if (!p.evictor.empty()) y += "  - name: DefaultEvictor\n    args:\n" + p.evictor;
  y += "  plugins:\n" + p.plugins;
  y += "    " + p.descheduleKey + ":\n" + p.set + "      " + p.enabledKey + ": [PodLifeTime]\n";
  return y + p.more;
}

// Two ready nodes (a cycle needs two); every pod is two hours old, so PodLifeTime wants each one
// its namespaces allow.
cluster::SnapshotPtr smallCluster() {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build());
  b.add(NodeBuilder("node2").build());
  b.add(PodBuilder("web", "shop").node("node1").created(kNow - 7200).build());
  b.add(PodBuilder("vip", "shop").node("node1").priority(5000).created(kNow - 7200).build());
  b.add(PodBuilder("other", "default").node("node1").created(kNow - 7200).build());
  return b.snapshot();
}

struct Relaxed {
  std::string name;
  Parts parts;
  std::vector<std::string> warnings;  // all of them, in order
  std::vector<std::string> evicted;   // sorted; what upstream evicts from smallCluster()
};

void PrintTo(const Relaxed& c, std::ostream* os) { *os << c.name; }

const std::vector<std::string> kShop = {"shop/vip", "shop/web"};
const std::vector<std::string> kAll = {"default/other", "shop/vip", "shop/web"};

// A second profile that evicts the old pods of `default`, opened by `nameLine` ("name: q"), or by
// its pluginConfig when `nameLine` is empty.
std::string defaultProfile(const std::string& nameLine) {
  std::string body =
      "pluginConfig:\n  - name: PodLifeTime\n"
      "    args: {maxPodLifeTimeSeconds: 3600, namespaces: {include: [default]}}\n"
      "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n";
  return nameLine.empty() ? "- " + body : "- " + nameLine + "\n  " + body;
}

std::string ignored(const std::string& path, const std::string& suggestion = "") {
  return "policy.yaml: " + path + ": unknown field, ignored (as upstream ignores it)" +
         (suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?");
}

class LenientLoad : public ::testing::TestWithParam<Relaxed> {};

TEST_P(LenientLoad, LoadsWarnsAndEvictsWhatUpstreamEvicts) {
  const Relaxed& c = GetParam();
  auto engine = engineFor(policyText(c.parts), kNow);
  ASSERT_TRUE(engine.isOk()) << engine.error();
  EXPECT_EQ(engine->policy.warnings, c.warnings);
  evictor::PlanSink sink;
  evictor::EvictionChain chain(engine->limits(), sink);
  const auto cluster = smallCluster();  // the decisions point into it: it must outlive them
  engine->runCycle(*cluster, chain);
  std::vector<std::string> evicted;
  for (const auto& d : sink.evictions()) evicted.push_back(d.pod->key());
  std::sort(evicted.begin(), evicted.end());
  EXPECT_EQ(evicted, c.evicted);
}

INSTANTIATE_TEST_SUITE_P(
    Table, LenientLoad,
    ::testing::Values(
        Relaxed{"baseline", {}, {}, kShop},
        // Unknown keys inside a profile, a pluginConfig entry, plugins or a plugin set: ignored by
        // upstream's (non-strict) policy decoder, so nothing changes.
        Relaxed{"profile_key", {.profile = "  description: nightly\n"}, {ignored("profiles[0].description")}, kShop},
        Relaxed{"entry_key",
                {.entry = "    comment: shop only\n"},
                {ignored("profiles[0].pluginConfig[0].comment")},
                kShop},
        Relaxed{
            "plugins_key", {.plugins = "    sorting: {}\n"}, {ignored("profiles[0].plugins.sorting", "sort")}, kShop},
        Relaxed{"set_key",
                {.set = "      disabledd: [RemoveDuplicates]\n"},
                {ignored("profiles[0].plugins.deschedule.disabledd", "disabled")},
                kShop},
        // Near misses of anything but `args` lose only what makes plugins run: upstream then runs
        // less, and so does kdesched.
        Relaxed{"misspelt_extension_point",
                {.descheduleKey = "Deschedule"},
                {ignored("profiles[0].plugins.Deschedule", "deschedule")},
                {}},
        Relaxed{"misspelt_enabled",
                {.enabledKey = "enable"},
                {ignored("profiles[0].plugins.deschedule.enable", "enabled")},
                {}},
        Relaxed{"misspelt_plugins", {.profile = "  plugin: {}\n"}, {ignored("profiles[0].plugin", "plugins")}, kShop},
        // At the top level only near misses of a limit, the node selector or the kdesched block
        // are guarded; dropping `profiles` runs nothing, dropping gracePeriodSeconds evicts the same.
        Relaxed{"top_level_profiles_case",
                {.top = "Profiles: []\n"},
                {"policy.yaml: Profiles: unknown top-level field, ignored (as upstream ignores it); did you mean "
                 "\"profiles\"?"},
                kShop},
        Relaxed{"top_level_grace_period_typo",
                {.top = "gracePeriodSecond: 5\n"},
                {"policy.yaml: gracePeriodSecond: unknown top-level field, ignored (as upstream ignores it); did you "
                 "mean \"gracePeriodSeconds\"?"},
                kShop},
        // Upstream runs a profile without a name, or with another one's, as written.
        Relaxed{"profile_without_name",
                {.more = defaultProfile("")},
                {"policy.yaml: profiles[1].name: missing; the profile runs unnamed, as upstream runs it (profile=\"\" "
                 "in logs and metrics)"},
                kAll},
        Relaxed{"profile_with_empty_name",
                {.more = defaultProfile("name: \"\"")},
                {"policy.yaml: profiles[1].name: empty; the profile runs unnamed, as upstream runs it (profile=\"\" in "
                 "logs and metrics)"},
                kAll},
        Relaxed{"profiles_sharing_a_name",
                {.more = defaultProfile("name: p")},
                {"policy.yaml: profiles[1].name: \"p\" is also used by profiles[0]; both run, as upstream runs them, "
                 "and share the profile label in logs and metrics"},
                kAll},
        // Upstream sends a negative grace period unchecked; the API server reads it as 1 second.
        Relaxed{"negative_grace_period",
                {.top = "gracePeriodSeconds: -1\n"},
                {"policy.yaml: gracePeriodSeconds: -1 is negative; sent as is, as upstream sends it, and the API "
                 "server then uses 1 second"},
                kShop},
        // Upstream's args types embed a TypeMeta: both keys are accepted there, with any value.
        Relaxed{"type_meta_in_args",
                {.args = "      apiVersion: descheduler/v1alpha2\n      kind: PodLifeTimeArgs\n"},
                {},
                kShop},
        // Upstream reads only `preevictionfilter`; the camel-case list, which kdesched also reads
        // when it is alone, is not even checked when both are there.
        Relaxed{"both_pre_eviction_filter_spellings",
                {.plugins = "    preEvictionFilter: {enabled: [NoSuchPlugin]}\n"
                            "    preevictionfilter: {enabled: [DefaultEvictor]}\n"},
                {"policy.yaml: profiles[0].plugins.preEvictionFilter: ignored because preevictionfilter is also set "
                 "(upstream reads only preevictionfilter)"},
                kShop},
        // Empty strings upstream treats as unset: no warning, and the same meaning.
        Relaxed{"priority_value_with_empty_name",
                {.evictor = "      priorityThreshold: {value: 1000, name: \"\"}\n"},
                {},
                {"shop/web"}},
        Relaxed{"no_eviction_policy_empty", {.evictor = "      noEvictionPolicy: \"\"\n"}, {}, kShop}),
    [](const ::testing::TestParamInfo<Relaxed>& info) { return info.param.name; });

TEST(LenientLoad, ANegativeGracePeriodIsSentAsWritten) {
  auto engine = engineFor(policyText({.top = "gracePeriodSeconds: -5\n"}), kNow);
  ASSERT_TRUE(engine.isOk()) << engine.error();
  EXPECT_EQ(engine->policy.gracePeriodSeconds, -5);
}

// The neighbours that stay errors: upstream would drop the field silently and evict more.
struct Kept {
  std::string name;
  Parts parts;
  std::string error;
};

void PrintTo(const Kept& c, std::ostream* os) { *os << c.name; }

class LenientLoadKeeps : public ::testing::TestWithParam<Kept> {};

TEST_P(LenientLoadKeeps, AnError) {
  auto engine = engineFor(policyText(GetParam().parts), kNow);
  ASSERT_FALSE(engine.isOk()) << GetParam().name << " loaded";
  EXPECT_EQ(engine.error(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, LenientLoadKeeps,
    ::testing::Values(
        // Without its args PodLifeTime here would still run, with `namespaces` gone: every old pod.
        Kept{"args_typo",
             {.argsKey = "arg"},
             "policy.yaml: profiles[0].pluginConfig[0].arg: unknown field \"arg\" (did you mean \"args\"?)"},
        Kept{"args_case",
             {.argsKey = "ARGS"},
             "policy.yaml: profiles[0].pluginConfig[0].ARGS: unknown field \"ARGS\" (did you mean \"args\"?)"},
        Kept{"limit_typo",
             {.top = "maxNoOfPodsToEvictPerNod: 1\n"},
             "policy.yaml: maxNoOfPodsToEvictPerNod: unknown field \"maxNoOfPodsToEvictPerNod\" (did you mean "
             "\"maxNoOfPodsToEvictPerNode\"?)"},
        Kept{"node_selector_case",
             {.top = "NodeSelector: zone=a\n"},
             "policy.yaml: NodeSelector: unknown field \"NodeSelector\" (did you mean \"nodeSelector\"?)"},
        Kept{"kdesched_typo",
             {.top = "kdeshed: {}\n"},
             "policy.yaml: kdeshed: unknown field \"kdeshed\" (did you mean \"kdesched\"?)"},
        Kept{"priority_value_and_name",
             {.evictor = "      priorityThreshold: {value: 1000, name: high}\n"},
             "policy.yaml: profiles[0].pluginConfig[1].args.priorityThreshold: priority threshold misconfigured, only "
             "one of priorityThreshold fields can be set"},
        Kept{"no_eviction_policy_unknown",
             {.evictor = "      noEvictionPolicy: Never\n"},
             "policy.yaml: profiles[0].pluginConfig[1].args.noEvictionPolicy: noEvictionPolicy accepts only "
             "[\"Preferred\" \"Mandatory\"] values, got \"Never\""},
        // Inside args upstream is strict too.
        Kept{"unknown_arg",
             {.args = "      namespace: {include: [shop]}\n"},
             "policy.yaml: profiles[0].pluginConfig[0].args.namespace: unknown field \"namespace\" (did you mean "
             "\"namespaces\"?)"},
        // Only the top level of args embeds the TypeMeta.
        Kept{"kind_nested_in_args",
             {.args = "      labelSelector: {kind: x}\n"},
             "policy.yaml: profiles[0].pluginConfig[0].args.labelSelector.kind: unknown field \"kind\" (known fields: "
             "matchLabels, matchExpressions)"}),
    [](const ::testing::TestParamInfo<Kept>& info) { return info.param.name; });

}  // namespace
}  // namespace kdesched::testing
