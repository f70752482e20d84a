// NodeMetrics and PodMetrics in a snapshot, exactly as `kubectl get --raw
// /apis/metrics.k8s.io/v1beta1/nodes` (and `/pods`) print them, appended to the usual kubectl
// output: read into the usage model when asked for, skipped and counted otherwise.
#include <gtest/gtest.h>

#include "pkg/cluster/loader.h"

namespace kdesched::cluster {
namespace {

const char* kNodes =
    R"({"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},
 "status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}]})";
// Items of a raw metrics.k8s.io LIST carry no kind: the list's kind names them.
const char* kNodeMetrics = R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
 {"metadata":{"name":"n1","creationTimestamp":"2026-11-30T10:00:00Z"},"timestamp":"2026-11-30T09:59:42Z",
  "window":"20.044s","usage":{"cpu":"3456789012n","memory":"6291456Ki"}}]})";
const char* kPodMetrics = R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
 {"metadata":{"name":"web","namespace":"default","creationTimestamp":"2026-11-30T10:00:00Z"},
  "timestamp":"2026-11-30T09:59:31Z","window":"17.4s","containers":[{"name":"app","usage":{"cpu":"712m","memory":"300Mi"}}]}]})";

TEST(LoaderMetrics, ReadsNodeAndPodMetricsLists) {
  Store s;
  usage::SourceReadings m;
  auto r = loadSnapshot(std::string(kNodes) + "\n" + kNodeMetrics + "\n" + kPodMetrics, "snap.json", s, &m);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->loaded.at("NodeMetrics"), 1u);
  EXPECT_EQ(r->loaded.at("PodMetrics"), 1u);
  const usage::NodeSample* n1 = m.node(api::Symbol("n1"));
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->cpuMilli, 3457);
  EXPECT_EQ(n1->memoryBytes, 6LL * 1024 * 1024 * 1024);
  EXPECT_EQ(n1->takenAt, 1796032782);
  auto web = m.pods.find("default", "web");
  ASSERT_TRUE(web.has_value());
  EXPECT_EQ(web->cpuMilli, 712);
}

TEST(LoaderMetrics, SkippedAndCountedWhenNotAskedFor) {
  Store s;
  auto r = loadSnapshot(std::string(kNodes) + kNodeMetrics, "snap.json", s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->skipped.at("NodeMetrics"), 1u);
}

TEST(LoaderMetrics, SingleItemsWithTheirKindAndYaml) {
  Store s;
  usage::SourceReadings m;
  auto r = loadSnapshot(
      "kind: Node\napiVersion: v1\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"4\"}}\n"
      "---\nkind: NodeMetrics\napiVersion: metrics.k8s.io/v1beta1\nmetadata: {name: n1}\n"
      "timestamp: \"2026-11-30T09:59:42Z\"\nusage: {cpu: 500m, memory: 1Gi}\n",
      "snap.yaml", s, &m);
  ASSERT_TRUE(r.isOk()) << r.error();
  const usage::NodeSample* n1 = m.node(api::Symbol("n1"));
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->cpuMilli, 500);
}

TEST(LoaderMetrics, ErrorsNameTheItem) {
  Store s;
  usage::SourceReadings m;
  auto twice = loadSnapshot(std::string(kNodeMetrics) + kNodeMetrics, "snap.json", s, &m);
  ASSERT_FALSE(twice.isOk());
  EXPECT_EQ(twice.error(),
            "snap.json: document[1].items[0] (NodeMetrics n1): the same object as document[0].items[0]; a snapshot "
            "holds each object once");
  usage::SourceReadings bad;
  auto quantity = loadSnapshot(
      R"({"kind":"PodMetricsList","items":[{"metadata":{"name":"w","namespace":"d"},"containers":[{"usage":{"cpu":"-1"}}]}]})",
      "snap.json", s, &bad);
  ASSERT_FALSE(quantity.isOk());
  EXPECT_NE(quantity.error().find("document.items[0] (PodMetrics d/w): containers[0].usage"), std::string::npos)
      << quantity.error();
  auto unnamed = loadSnapshot(R"({"kind":"NodeMetrics","usage":{"cpu":"1"}})", "snap.json", s, &bad);
  ASSERT_FALSE(unnamed.isOk());
  EXPECT_NE(unnamed.error().find("metadata.name: missing"), std::string::npos) << unnamed.error();
}

}  // namespace
}  // namespace kdesched::cluster
