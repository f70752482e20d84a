// The policy's top level is read as upstream reads it: unknown keys are ignored (with a warning),
// except a near miss of a known field, which would silently drop a limit and so stays an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/policy/policy.h"

namespace kdesched::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kHead = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n";

Result<DeschedulerPolicy> parse(const std::string& body) { return parsePolicy(kHead + body, "policy.yaml"); }

TEST(TopLevel, UnknownKeysAreIgnoredWithAWarningAsUpstreamIgnoresThem) {
  auto p = parse(
      "tracing:\n  collectorEndpoint: otel:4317\nprometheus:\n  url: http://prometheus:9090\n"
      "strategies: {}\nmaxNoOfPodsToEvictTotal: 3\nprofiles: []\n");
  ASSERT_TRUE(p.isOk()) << p.error();
  EXPECT_EQ(p->maxNoOfPodsToEvictTotal, 3u);
  EXPECT_THAT(p->warnings,
              ElementsAre("policy.yaml: tracing: accepted and ignored: kdesched does not export traces",
                          "policy.yaml: prometheus: unknown top-level field, ignored (as upstream ignores it)",
                          "policy.yaml: strategies: unknown top-level field, ignored (as upstream ignores it)"));
}

TEST(TopLevel, AKnownPolicyHasNoWarnings) {
  auto p = parse("maxNoOfPodsToEvictPerNode: 1\nkdesched: {}\nprofiles: []\n");
  ASSERT_TRUE(p.isOk()) << p.error();
  EXPECT_THAT(p->warnings, IsEmpty());
}

// Within edit distance 2 of a known field: a typo of a limit or a selector, which upstream would
// drop silently (and then evict more than asked). At distance 3 it is some other tool's key.
TEST(TopLevel, ANearMissOfAKnownFieldStaysAnError) {
  struct Case {
    std::string yaml, error;
  };
  for (const Case& c : std::vector<Case>{
           {"maxNoOfPodsToEvictPerNod: 5\n",
            "policy.yaml: maxNoOfPodsToEvictPerNod: unknown field \"maxNoOfPodsToEvictPerNod\" (did you mean "
            "\"maxNoOfPodsToEvictPerNode\"?)"},
           {"maxNoOfPodToEvictTotl: 5\n",
            "policy.yaml: maxNoOfPodToEvictTotl: unknown field \"maxNoOfPodToEvictTotl\" (did you mean "
            "\"maxNoOfPodsToEvictTotal\"?)"},
           {"nodeselector: a=b\n",
            "policy.yaml: nodeselector: unknown field \"nodeselector\" (did you mean \"nodeSelector\"?)"},
           {"Profiles: []\n", "policy.yaml: Profiles: unknown field \"Profiles\" (did you mean \"profiles\"?)"},
       }) {
    auto p = parse(c.yaml);
    ASSERT_FALSE(p.isOk()) << c.yaml;
    EXPECT_EQ(p.error(), c.error);
  }
  auto far = parse("maxNoOfPodsEvictTtl: 5\n");  // distance 3 from maxNoOfPodsToEvictTotal
  ASSERT_TRUE(far.isOk()) << far.error();
  EXPECT_THAT(far->warnings, ElementsAre("policy.yaml: maxNoOfPodsEvictTtl: unknown top-level field, ignored (as "
                                         "upstream ignores it)"));
}

// Inside plugin args and profiles nothing changes: upstream is strict there too.
TEST(TopLevel, NestedObjectsStayStrict) {
  auto p = parse("profiles:\n- name: a\n  pluginConfig: []\n  plugins: {}\n  tracing: {}\n");
  ASSERT_FALSE(p.isOk());
  EXPECT_THAT(p.error(), ::testing::HasSubstr("profiles[0].tracing: unknown field \"tracing\""));
}

}  // namespace
}  // namespace kdesched::policy
