#include "pkg/cluster/loader.h"

#include <gtest/gtest.h>

#include <random>

namespace kdesched::cluster {
namespace {

const char* kNode =
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"n1"}},
 "status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}})";
const char* kPod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default","uid":"u1"},
 "spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]},"status":{"phase":"Running"}})";

Result<LoadReport> load(const std::string& text, Store& s) { return loadSnapshot(text, "snap.json", s); }

TEST(Loader, V1List) {
  Store s;
  auto r = load(std::string(R"({"apiVersion":"v1","kind":"List","items":[)") + kNode + "," + kPod +
                    R"(,{"kind":"Service","metadata":{"name":"svc"}}]})",
                s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->loaded.at("Node"), 1u);
  EXPECT_EQ(r->loaded.at("Pod"), 1u);
  EXPECT_EQ(r->skipped.at("Service"), 1u);
  auto snap = s.snapshot();
  ASSERT_EQ(snap->podCount(), 1u);
  EXPECT_EQ(snap->pods()[0]->requests.get(api::kCpu()), 100);
}

TEST(Loader, TypedListItemsWithoutKind) {
  Store s;
  auto r = load(R"({"kind":"PodList","items":[{"metadata":{"name":"p","namespace":"d"},"spec":{}}]})", s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(s.count(api::Kind::Pod), 1u);
}

TEST(Loader, SingleObjectAndArray) {
  Store s;
  ASSERT_TRUE(load(kNode, s).isOk());
  ASSERT_TRUE(load(std::string("[") + kPod + "]", s).isOk());
  EXPECT_EQ(s.count(api::Kind::Node), 1u);
  EXPECT_EQ(s.count(api::Kind::Pod), 1u);
}

TEST(Loader, MultiDocumentYaml) {
  Store s;
  auto r = loadSnapshot(R"(apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: default}
  spec:
    nodeName: n1
    containers:
    - name: c
      resources: {requests: {memory: 512Mi}}
)",
                        "snap.yaml", s);
  ASSERT_TRUE(r.isOk()) << r.error();
  auto snap = s.snapshot();
  ASSERT_EQ(snap->podCount(), 1u);
  EXPECT_EQ(snap->pods()[0]->requests.get(api::kMemory()), 512LL * 1024 * 1024 * 1000);
}

TEST(Loader, PodOnUnknownNodeIsANamedCountedSkip) {
  Store s;
  auto r = load(std::string(R"({"kind":"List","items":[)") + kPod + "]}", s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->skipped.at("Pod on an unknown node"), 1u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("pod default/p1 is bound to node n1"), std::string::npos);
}

struct BadCase {
  std::string name;
  std::string text;
  std::string wantInError;
};

class LoaderBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(LoaderBad, ClearError) {
  Store s;
  auto r = load(GetParam().text, s);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.error().find(GetParam().wantInError), std::string::npos) << r.error();
  EXPECT_EQ(r.error().rfind("snap.json: ", 0), 0u) << r.error();
  EXPECT_EQ(s.count(api::Kind::Pod), 0u);  // nothing half-loaded
}

INSTANTIATE_TEST_SUITE_P(
    Table, LoaderBad,
    ::testing::Values(
        BadCase{"empty", "  \n", "empty"},
        BadCase{"truncated_json", R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":)", "not valid JSON"},
        BadCase{
            "bad_quantity",
            R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p","namespace":"d"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"12x"}}}]}}]})",
            "12x"},
        BadCase{
            "bad_operator",
            R"({"kind":"Pod","metadata":{"name":"p","namespace":"d"},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Maybe","values":["x"]}]}]}}}}})",
            "Maybe"},
        BadCase{"items_not_array", R"({"kind":"List","items":{}})", "items"},
        BadCase{
            "negative_restart_count",
            R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"crashy","namespace":"d"},"status":{"containerStatuses":[{"name":"app","restartCount":-3}]}}]})",
            "(Pod d/crashy): status.containerStatuses[0].restartCount: restartCount -3 is negative"},
        BadCase{"binary", std::string("{\"kind\":\0", 9), "NUL"}, BadCase{"scalar", "42", "expected"}),
    [](const auto& info) { return info.param.name; });

TEST(Loader, TenMegabytesOfRandomBytesFailFast) {
  std::mt19937 rng(42);
  std::string junk(10 * 1024 * 1024, '\0');
  for (auto& c : junk) c = static_cast<char>(rng() % 255 + 1);  // no NUL: go through the parsers
  Store s;
  auto r = loadSnapshot(junk, "junk.bin", s);
  EXPECT_FALSE(r.isOk());
}

}  // namespace
}  // namespace kdesched::cluster

namespace kdesched::cluster {
namespace {

// yaml-cpp 0.7's LoadAll loops forever on a document starting with ","; the loader must not.
TEST(Loader, YamlThatHangsYamlCppIsAnError) {
  Store s;
  auto r = loadSnapshot(",\n", "snap.yaml", s);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.error().find("line 1"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace kdesched::cluster
