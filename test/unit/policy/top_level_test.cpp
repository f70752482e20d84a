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

// Within edit distance 2 of a limit, the node selector or the kdesched block (or equal to one but
// for case): upstream would drop it silently and then evict more than asked. At distance 3 it is
// some other tool's key. pkg/policy's lenient_test covers the near misses that only warn.
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
           {"MAXNOOFPODSTOEVICTTOTAL: 5\n",
            "policy.yaml: MAXNOOFPODSTOEVICTTOTAL: unknown field \"MAXNOOFPODSTOEVICTTOTAL\" (did you mean "
            "\"maxNoOfPodsToEvictTotal\"?)"},
       }) {
    auto p = parse(c.yaml);
    ASSERT_FALSE(p.isOk()) << c.yaml;
    EXPECT_EQ(p.error(), c.error);
  }
  auto far = parse("maxNoOfPodsEvictTotl: 5\n");  // distance 3 from maxNoOfPodsToEvictTotal
  ASSERT_TRUE(far.isOk()) << far.error();
  EXPECT_THAT(far->warnings, ElementsAre("policy.yaml: maxNoOfPodsEvictTotl: unknown top-level field, ignored (as "
                                         "upstream ignores it); did you mean \"maxNoOfPodsToEvictTotal\"?"));
}

// Inside profiles upstream ignores unknown keys too; only plugin args are strict there.
TEST(TopLevel, NestedUnknownKeysWarnTooAndTracingIsNotSpecialThere) {
  auto p = parse("profiles:\n- name: a\n  pluginConfig: []\n  plugins: {}\n  tracing: {}\n");
  ASSERT_TRUE(p.isOk()) << p.error();
  EXPECT_THAT(p->warnings,
              ElementsAre("policy.yaml: profiles[0].tracing: unknown field, ignored (as upstream ignores it)"));
}

}  // namespace
}  // namespace kdesched::policy
