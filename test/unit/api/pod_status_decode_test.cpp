// Decoding what the failed-pod, restart and lifetime plugins read: images, container statuses,
// conditions and status.reason; from API JSON and from YAML snapshots.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "test/unit/api/decode_fixtures.h"

namespace kdesched::api {
namespace {

constexpr std::string_view kFailedPodYaml = R"yaml(
apiVersion: v1
kind: Pod
metadata:
  name: batch-x7
  namespace: jobs
  creationTimestamp: "2024-05-02T08:00:00Z"
spec:
  initContainers:
  - name: fetch
    image: registry.example.com/fetch:1
  containers:
  - name: app
    image: registry.example.com/app:3.2
  - name: sidecar
    image: registry.example.com/proxy:2.1
status:
  phase: Failed
  reason: Evicted
  conditions:
  - type: Ready
    status: "False"
    reason: PodFailed
    lastTransitionTime: "2024-05-02T09:00:00Z"
  - type: PodScheduled
    status: "True"
    lastTransitionTime: null
  initContainerStatuses:
  - name: fetch
    restartCount: 2
    state:
      terminated:
        reason: Completed
        exitCode: 0
  containerStatuses:
  - name: app
    restartCount: 7
    state:
      waiting:
        reason: CrashLoopBackOff
    lastState:
      terminated:
        reason: OOMKilled
        exitCode: 137
  - name: sidecar
    restartCount: 0
    state:
      running:
        startedAt: "2024-05-02T08:00:05Z"
  ephemeralContainerStatuses:
  - name: debugger
    restartCount: 0
    state:
      terminated:
        reason: Error
        exitCode: -1
)yaml";

TEST(DecodePodStatusTest, EveryFieldFromAYamlSnapshot) {
  auto pod = podFromYaml(kFailedPodYaml);
  ASSERT_TRUE(pod.isOk()) << pod.error();
  ASSERT_EQ(pod->containerImages().size(), 2u);  // init containers' images are not part of the list
  EXPECT_EQ(pod->containerImages()[0].view(), "registry.example.com/app:3.2");
  EXPECT_EQ(pod->containerImages()[1].view(), "registry.example.com/proxy:2.1");
  ASSERT_NE(pod->statusDetail, nullptr);
  const PodStatusDetail& st = pod->status();
  EXPECT_EQ(st.reason.view(), "Evicted");
  EXPECT_FALSE(pod->ready);
  ASSERT_EQ(st.conditions.size(), 2u);
  EXPECT_EQ(st.conditions[0].type(), "Ready");
  EXPECT_EQ(st.conditions[0].status(), "False");
  EXPECT_EQ(st.conditions[0].reason(), "PodFailed");
  EXPECT_EQ(st.conditions[0].lastTransitionTime(), 1714640400);
  EXPECT_EQ(st.conditions[1].type(), "PodScheduled");
  EXPECT_EQ(st.conditions[1].reason(), "");
  EXPECT_FALSE(st.conditions[1].lastTransitionTime().has_value());

  // The running sidecar has nothing beyond the defaults and is not kept; lastState is not read.
  ASSERT_EQ(st.containers.size(), 3u);
  EXPECT_EQ(st.containers[0], (ContainerStatus{ContainerKind::Regular, 7, Symbol("CrashLoopBackOff"), Symbol(), {}}));
  EXPECT_EQ(st.containers[1], (ContainerStatus{ContainerKind::Init, 2, Symbol(), Symbol("Completed"), 0}));
  EXPECT_EQ(st.containers[2], (ContainerStatus{ContainerKind::Ephemeral, 0, Symbol(), Symbol("Error"), -1}));
}

TEST(DecodePodStatusTest, APlainRunningPodPaysNoDetailBlock) {
  auto pod = podFromJson(
      R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]},
          "status":{"phase":"Running","containerStatuses":[{"name":"app","restartCount":0,"ready":true,
          "state":{"running":{"startedAt":"2024-05-02T08:00:05Z"}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->statusDetail, nullptr);
  EXPECT_TRUE(pod->status().empty());
  ASSERT_NE(pod->images, nullptr);
  EXPECT_EQ(pod->containerImages(), (ImageList{Symbol("nginx:1.27")}));
}

TEST(DecodePodStatusTest, AbsentFieldsLeaveNothing) {
  auto pod = podFromJson(R"({"metadata":{"name":"bare"},"status":{"phase":"Failed"}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->statusDetail, nullptr);
  EXPECT_EQ(pod->images, nullptr);
  EXPECT_TRUE(pod->containerImages().empty());
  EXPECT_TRUE(pod->status().reason.empty());
}

// What MakeRoomForPendingPods reads of a pending pod: PodScheduled's reason and transition time,
// the scheduling gates and the nominated node.
TEST(DecodePodStatusTest, APendingPodKeepsWhatMakeRoomReads) {
  auto pod = podFromJson(
      R"({"metadata":{"name":"big"},"spec":{"schedulingGates":[{"name":"example.com/quota"}]},
          "status":{"phase":"Pending","nominatedNodeName":"node2","conditions":[{"type":"PodScheduled",
          "status":"False","reason":"Unschedulable","lastTransitionTime":"2024-05-02T08:00:00Z"}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_TRUE(pod->schedulingGated);
  EXPECT_EQ(pod->status().nominatedNodeName.view(), "node2");
  ASSERT_EQ(pod->status().conditions.size(), 1u);
  EXPECT_EQ(pod->status().conditions[0].reason(), "Unschedulable");
  EXPECT_EQ(pod->status().conditions[0].lastTransitionTime(), 1714636800);

  auto open = podFromJson(R"({"spec":{"schedulingGates":[]},"status":{"nominatedNodeName":null}})");
  ASSERT_TRUE(open.isOk()) << open.error();
  EXPECT_FALSE(open->schedulingGated);
  EXPECT_EQ(open->statusDetail, nullptr);
}

TEST(DecodePodStatusTest, NullsMeanAbsent) {
  auto pod = podFromJson(
      R"({"spec":{"containers":[{"name":"a","image":null}]},
          "status":{"reason":null,"conditions":null,"initContainerStatuses":null,"ephemeralContainerStatuses":null,
          "containerStatuses":[{"restartCount":null,"state":null},
                               {"restartCount":1,"state":{"waiting":null,"terminated":null}},
                               {"state":{"waiting":{"reason":null},"terminated":{"reason":null,"exitCode":null}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  // A missing image keeps its place: the duplicate key is positional.
  EXPECT_EQ(pod->containerImages(), (ImageList{Symbol()}));
  const PodStatusDetail& st = pod->status();
  EXPECT_TRUE(st.conditions.empty());
  ASSERT_EQ(st.containers.size(), 2u);
  EXPECT_EQ(st.containers[0], (ContainerStatus{ContainerKind::Regular, 1, Symbol(), Symbol(), {}}));
  // terminated: {} is a terminated container; its exitCode is 0 when absent, as in Go.
  EXPECT_EQ(st.containers[1], (ContainerStatus{ContainerKind::Regular, 0, Symbol(), Symbol(), 0}));
}

TEST(DecodePodStatusTest, OddValuesAreKeptAsWritten) {
  auto pod = podFromJson(
      R"({"status":{"reason":"SomethingNew","conditions":[{"type":"example.com/Gate","status":"Maybe"}],
          "containerStatuses":[{"restartCount":2147483647,"state":{"terminated":{"exitCode":-2147483648}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  const PodStatusDetail& st = pod->status();
  EXPECT_EQ(st.reason.view(), "SomethingNew");
  ASSERT_EQ(st.conditions.size(), 1u);
  EXPECT_EQ(st.conditions[0].type(), "example.com/Gate");
  EXPECT_EQ(st.conditions[0].status(), "Maybe");
  ASSERT_EQ(st.containers.size(), 1u);
  EXPECT_EQ(st.containers[0].restartCount, 2147483647);
  EXPECT_EQ(st.containers[0].exitCode, -2147483648);
}

TEST(DecodePodStatusTest, PodsWithTheSameImagesShareOneList) {
  auto a = podFromJson(R"({"spec":{"containers":[{"image":"app:1"},{"image":"proxy:2"}]}})");
  auto b = podFromJson(R"({"spec":{"containers":[{"image":"app:1"},{"image":"proxy:2"}]}})");
  auto c = podFromJson(R"({"spec":{"containers":[{"image":"proxy:2"},{"image":"app:1"}]}})");
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  EXPECT_EQ(a->images.get(), b->images.get());
  EXPECT_NE(a->images.get(), c->images.get());  // order matters
}

TEST(DecodePodStatusTest, ConditionsAreCompact) {
  static_assert(sizeof(PodCondition) == 16);
  PodCondition a("Ready", "True", "", 5);
  PodCondition b("Ready", "True", "", 5);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, PodCondition("Ready", "True", "", 6));
  EXPECT_NE(a, PodCondition("Ready", "False", "", 5));
  EXPECT_EQ(PodCondition().type(), "");
  EXPECT_FALSE(PodCondition().lastTransitionTime().has_value());
}

TEST(DecodePodStatusTest, ReadyComesFromTheReadyCondition) {
  auto pod = podFromJson(
      R"({"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"ContainersReady","status":"False"}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_TRUE(pod->ready);
  EXPECT_EQ(pod->status().conditions.size(), 2u);
}

struct StatusErrorCase {
  const char* name;
  const char* json;
  const char* error;
};

class DecodePodStatusErrorTest : public ::testing::TestWithParam<StatusErrorCase> {};

TEST_P(DecodePodStatusErrorTest, NamesTheFieldPath) {
  const auto& c = GetParam();
  auto pod = podFromJson(c.json);
  ASSERT_FALSE(pod.isOk()) << c.name;
  EXPECT_EQ(pod.error(), c.error) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, DecodePodStatusErrorTest,
    ::testing::Values(
        StatusErrorCase{"negative restart count", R"({"status":{"containerStatuses":[{},{"restartCount":-1}]}})",
                        "status.containerStatuses[1].restartCount: restartCount -1 is negative"},
        StatusErrorCase{"negative init restart count", R"({"status":{"initContainerStatuses":[{"restartCount":-5}]}})",
                        "status.initContainerStatuses[0].restartCount: restartCount -5 is negative"},
        StatusErrorCase{"restart count as string", R"({"status":{"containerStatuses":[{"restartCount":"7"}]}})",
                        "status.containerStatuses[0].restartCount: expected integer, got string"},
        StatusErrorCase{"restart count beyond int32",
                        R"({"status":{"containerStatuses":[{"restartCount":4294967296}]}})",
                        "status.containerStatuses[0].restartCount: integer 4294967296 out of int32 range"},
        StatusErrorCase{"fractional exit code",
                        R"({"status":{"ephemeralContainerStatuses":[{"state":{"terminated":{"exitCode":1.5}}}]}})",
                        "status.ephemeralContainerStatuses[0].state.terminated.exitCode: expected integer, got 1.5"},
        StatusErrorCase{"waiting reason as number",
                        R"({"status":{"containerStatuses":[{"state":{"waiting":{"reason":3}}}]}})",
                        "status.containerStatuses[0].state.waiting.reason: expected string, got number"},
        StatusErrorCase{"bad transition time",
                        R"({"status":{"conditions":[{"type":"Ready","lastTransitionTime":"soon"}]}})",
                        "status.conditions[0].lastTransitionTime: invalid RFC 3339 timestamp \"soon\""},
        StatusErrorCase{"statuses not an array", R"({"status":{"containerStatuses":{"name":"a"}}})",
                        "status.containerStatuses: expected array, got object"},
        StatusErrorCase{"status reason as object", R"({"status":{"reason":{}}})",
                        "status.reason: expected string, got object"},
        StatusErrorCase{"image as number", R"({"spec":{"containers":[{"image":7}]}})",
                        "spec.containers[0].image: expected string, got number"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

}  // namespace
}  // namespace kdesched::api
