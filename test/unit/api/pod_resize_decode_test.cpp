// In-place pod resize: a pod's requests as kube-scheduler v1.36 counts them, from the spec and the
// resources its container statuses report (allocatedResources, resources.requests), with the
// PodResizePending condition deciding whether the spec still counts.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "pkg/api/scheduling.h"
#include "test/unit/api/decode_fixtures.h"

namespace kdesched::api {
namespace {

struct ResizeCase {
  std::string_view name;
  std::string_view containers;             // spec.containers
  std::string_view initContainers = "[]";  // spec.initContainers
  std::string_view status = "{}";          // the whole status object
  bool statusFirst = false;                // status written before spec in the document
  ResourceList want;
};

void PrintTo(const ResizeCase& c, std::ostream* os) { *os << c.name; }

std::string podJson(const ResizeCase& c) {
  const std::string spec = R"("spec":{"containers":)" + std::string(c.containers) + R"(,"initContainers":)" +
                           std::string(c.initContainers) + "}";
  const std::string status = R"("status":)" + std::string(c.status);
  const std::string meta = R"("metadata":{"name":"web-0","namespace":"shop"})";
  return "{" + meta + "," + (c.statusFirst ? status + "," + spec : spec + "," + status) + "}";
}

constexpr std::string_view kApp500m = R"([{"name":"app","resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}])";

const ResizeCase kCases[] = {
    {.name = "NoStatusResourcesCountsTheSpec",
     .containers = kApp500m,
     .status = R"({"containerStatuses":[{"name":"app","restartCount":0}]})",
     .want = {{"cpu", 500}, {"memory", 256 * kMi}}},
    {.name = "NullStatusResourcesCountsTheSpec",
     .containers = kApp500m,
     .status = R"({"containerStatuses":[{"name":"app","resources":null,"allocatedResources":{"cpu":"2"}}]})",
     .want = {{"cpu", 500}, {"memory", 256 * kMi}}},
    {.name = "SettledResizeCountsTheSpec",
     .containers = kApp500m,
     .status = R"({"containerStatuses":[{"name":"app","allocatedResources":{"cpu":"500m","memory":"256Mi"},
                   "resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]})",
     .want = {{"cpu", 500}, {"memory", 256 * kMi}}},
    {.name = "ResizeUpPendingCountsTheLargerSpec",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"2","memory":"256Mi"}}}])",
     .status = R"({"conditions":[{"type":"PodResizePending","status":"True","reason":"Deferred"}],
                   "containerStatuses":[{"name":"app","allocatedResources":{"cpu":"500m","memory":"256Mi"},
                   "resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]})",
     .want = {{"cpu", 2000}, {"memory", 256 * kMi}}},
    {.name = "ResizeDownInProgressCountsTheActuatedAmount",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"250m","memory":"128Mi"}}}])",
     .status = R"({"conditions":[{"type":"PodResizeInProgress","status":"True"}],
                   "containerStatuses":[{"name":"app","allocatedResources":{"cpu":"250m","memory":"128Mi"},
                   "resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]})",
     .want = {{"cpu", 500}, {"memory", 256 * kMi}}},
    {.name = "AllocatedAboveSpecAndActuatedCounts",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"250m"}}}])",
     .status = R"({"containerStatuses":[{"name":"app","allocatedResources":{"cpu":"750m"},
                   "resources":{"requests":{"cpu":"500m"}}}]})",
     .want = {{"cpu", 750}}},
    {.name = "ResourceOnlyInStatusCounts",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"250m"}}}])",
     .status = R"({"containerStatuses":[{"name":"app","allocatedResources":{"memory":"64Mi"},"resources":{}}]})",
     .want = {{"cpu", 250}, {"memory", 64 * kMi}}},
    {.name = "InfeasibleResizeIgnoresTheSpec",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"64","memory":"256Mi"}}}])",
     .status = R"({"conditions":[{"type":"PodResizePending","status":"True","reason":"Infeasible"}],
                   "containerStatuses":[{"name":"app","allocatedResources":{"cpu":"500m","memory":"256Mi"},
                   "resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]})",
     .want = {{"cpu", 500}, {"memory", 256 * kMi}}},
    {.name = "InfeasibleDropsASpecOnlyResource",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"}}}])",
     .status = R"({"conditions":[{"type":"PodResizePending","status":"True","reason":"Infeasible"}],
                   "containerStatuses":[{"name":"app","resources":{"requests":{"cpu":"500m"}}}]})",
     .want = {{"cpu", 500}}},
    {.name = "OnlyTheFirstResizePendingConditionCounts",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"4"}}}])",
     .status = R"({"conditions":[{"type":"PodResizePending","status":"True","reason":"Deferred"},
                                 {"type":"PodResizePending","status":"True","reason":"Infeasible"}],
                   "containerStatuses":[{"name":"app","resources":{"requests":{"cpu":"500m"}}}]})",
     .want = {{"cpu", 4000}}},
    {.name = "StatusBeforeSpecInTheDocument",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"250m"}}}])",
     .status = R"({"containerStatuses":[{"name":"app","resources":{"requests":{"cpu":"500m"}}}]})",
     .statusFirst = true,
     .want = {{"cpu", 500}}},
    {.name = "StatusOfAnotherContainerIsNotMatched",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"250m"}}}])",
     .status = R"({"containerStatuses":[{"name":"old-app","resources":{"requests":{"cpu":"8"}}}]})",
     .want = {{"cpu", 250}}},
    {.name = "EphemeralContainerStatusesDoNotCount",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"250m"}}}])",
     .status = R"({"ephemeralContainerStatuses":[{"name":"app","resources":{"requests":{"cpu":"8"}}}]})",
     .want = {{"cpu", 250}}},
    // app 100m + sidecar counted at its actuated 300m = 400m; while setup runs, the sidecar before
    // it holds 300m and setup its spec's 200m (an init container's status never counts) = 500m.
    {.name = "SidecarCountsItsStatusPlainInitContainerItsSpec",
     .containers = R"([{"name":"app","resources":{"requests":{"cpu":"100m"}}}])",
     .initContainers = R"([{"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"100m"}}},
                          {"name":"setup","resources":{"requests":{"cpu":"200m"}}}])",
     .status = R"({"initContainerStatuses":[{"name":"proxy","resources":{"requests":{"cpu":"300m"}}},
                                            {"name":"setup","resources":{"requests":{"cpu":"900m"}}}]})",
     .want = {{"cpu", 500}}},
};

class PodResizeDecode : public testing::TestWithParam<ResizeCase> {};

TEST_P(PodResizeDecode, RequestsAsKubeSchedulerCountsThem) {
  const auto& c = GetParam();
  auto pod = podFromJson(podJson(c));
  ASSERT_TRUE(pod.isOk()) << pod.status().message();
  EXPECT_EQ(pod->requests.list(), c.want);
}

INSTANTIATE_TEST_SUITE_P(Cases, PodResizeDecode, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<ResizeCase>& info) { return std::string(info.param.name); });

TEST(EffectiveResizeRequests, MaxOfSpecActuatedAllocatedUnlessInfeasible) {
  const ResourceList spec{{"cpu", 1000}, {"memory", 100}};
  const ResourceList actuated{{"cpu", 500}, {"memory", 300}};
  const ResourceList allocated{{"cpu", 700}};
  EXPECT_EQ(effectiveResizeRequests(spec, actuated, allocated, false), (ResourceList{{"cpu", 1000}, {"memory", 300}}));
  EXPECT_EQ(effectiveResizeRequests(spec, actuated, allocated, true), (ResourceList{{"cpu", 700}, {"memory", 300}}));
}

}  // namespace
}  // namespace kdesched::api
