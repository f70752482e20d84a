// Decoding NodeMetrics/PodMetrics lists and Prometheus query answers into the usage model, with
// upstream's errors for answers it refuses.
#include "pkg/usage/decode.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kdesched::usage {
namespace {

const char* kNodeList = R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
 {"metadata":{"name":"n1","creationTimestamp":"2026-11-30T10:00:05Z"},"timestamp":"2026-11-30T09:59:50Z",
  "window":"20.01s","usage":{"cpu":"3201000000n","memory":"12345Ki"}},
 {"metadata":{"name":"n2"},"timestamp":"2026-11-30T09:59:48Z","window":"20s","usage":{"cpu":"401m"}}]})";

const char* kPodList = R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
 {"metadata":{"name":"web","namespace":"shop"},"timestamp":"2026-11-30T09:59:40Z","window":"20s",
  "containers":[{"name":"app","usage":{"cpu":"250m","memory":"100Mi"}},{"name":"side","usage":{"cpu":"1500000n","memory":"1Ki"}}]},
 {"metadata":{"name":"db","namespace":"shop"},"timestamp":"2026-11-30T09:59:45Z","window":"20s",
  "containers":[{"name":"db","usage":{"memory":"1Gi"}}]}]})";

TEST(MetricsList, NodeMetrics) {
  SourceReadings r;
  ASSERT_TRUE(addMetricsList(kNodeList, r).isOk());
  const NodeSample* n1 = r.node(api::Symbol("n1"));
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->cpuMilli, 3201);
  EXPECT_EQ(n1->memoryBytes, 12345 * 1024);
  EXPECT_EQ(n1->takenAt, 1796032790);  // the sample's timestamp, not the object's creation
  const NodeSample* n2 = r.node(api::Symbol("n2"));
  ASSERT_NE(n2, nullptr);
  EXPECT_FALSE(n2->memoryBytes.has_value());
}

TEST(MetricsList, PodMetricsSumContainersAndSetAsideIncompletePods) {
  SourceReadings r;
  ASSERT_TRUE(addMetricsList(kPodList, r).isOk());
  r.pods.finish();
  auto web = r.pods.find("shop", "web");
  ASSERT_TRUE(web.has_value());
  EXPECT_EQ(web->cpuMilli, 252);
  EXPECT_EQ(web->memoryBytes, 100 * 1024 * 1024 + 1024);
  EXPECT_FALSE(r.pods.find("shop", "db").has_value());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "PodMetrics shop/db: a container reports no cpu or memory usage; the pod's usage is unknown");
  EXPECT_EQ(r.podsTakenAt, 1796032780);
}

TEST(MetricsList, ErrorsNameTheItem) {
  SourceReadings r;
  Status st =
      addMetricsList(R"({"kind":"NodeMetricsList","items":[{"metadata":{"name":"n1"},"usage":{"cpu":"12x"}}]})", r);
  EXPECT_EQ(st.message(), "items[0]: usage.cpu: invalid quantity \"12x\"");
  EXPECT_FALSE(addMetricsList(R"({"kind":"PodList","items":[]})", r).isOk());
  EXPECT_FALSE(addMetricsList("{", r).isOk());
}

Result<SourceReadings> prom(const std::string& json) {
  SourceReadings r;
  Status st = decodePrometheusAnswer(json, r);
  if (!st.isOk()) return st;
  return r;
}

// NaN-free sentinel for a node the answer did not hold, so the comparison fails instead of crashing.
double score(const SourceReadings& r, const char* node) {
  const NodeSample* s = r.node(api::Symbol(node));
  return s && s->score ? *s->score : -1;
}

std::string vector(const std::string& samples) {
  return R"({"status":"success","data":{"resultType":"vector","result":[)" + samples + "]}}";
}

TEST(PrometheusAnswer, VectorByInstance) {
  auto r = prom(vector(R"({"metric":{"instance":"n1","job":"node"},"value":[1796032800.5,"0.5695757575757561"]},
                          {"metric":{"instance":"n2"},"value":[1796032800.5,"1"]})"));
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_DOUBLE_EQ(score(*r, "n1"), 0.5695757575757561);
  ASSERT_NE(r->node(api::Symbol("n1")), nullptr);
  EXPECT_EQ(r->node(api::Symbol("n1"))->takenAt, 1796032800);
  EXPECT_DOUBLE_EQ(score(*r, "n2"), 1);
}

TEST(PrometheusAnswer, UpstreamsErrors) {
  EXPECT_EQ(prom(R"({"status":"success","data":{"resultType":"matrix","result":[]}})").error(),
            "expected query results to be of type \"vector\", got \"matrix\" instead");
  EXPECT_EQ(prom(R"({"status":"success","data":{"resultType":"scalar","result":[1,"0.5"]}})").error(),
            "expected query results to be of type \"vector\", got \"scalar\" instead");
  EXPECT_EQ(prom(vector(R"({"metric":{"node":"n1"},"value":[1,"0.5"]})")).error(),
            "the collected metrics sample is missing 'instance' key");
  EXPECT_EQ(prom(vector(R"({"metric":{"instance":"n1"},"value":[1,"1.5"]})")).error(),
            "the collected metrics sample for \"n1\" has value 1.5 outside of <0; 1> interval");
  EXPECT_EQ(prom(vector(R"({"metric":{"instance":"n1"},"value":[1,"-Inf"]})")).error(),
            "the collected metrics sample for \"n1\" has value -inf outside of <0; 1> interval");
  EXPECT_EQ(prom(R"({"status":"error","errorType":"bad_data","error":"parse error at char 5"})").error(),
            "unable to capture prometheus metrics: bad_data: parse error at char 5");
  EXPECT_FALSE(prom("[]").isOk());
  EXPECT_FALSE(prom(vector(R"({"metric":{"instance":"n1"},"value":[1,"high"]})")).isOk());
}

TEST(PrometheusAnswer, NaNIsKeptForThePluginToLeaveOut) {
  auto r = prom(vector(R"({"metric":{"instance":"n1"},"value":[1,"NaN"]})"));
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_TRUE(std::isnan(score(*r, "n1")));
}

TEST(PrometheusAnswer, AnInstanceTwiceIsLeftOutWithANote) {
  auto r = prom(vector(R"({"metric":{"instance":"n1","cpu":"0"},"value":[1,"0.2"]},
                          {"metric":{"instance":"n1","cpu":"1"},"value":[1,"0.9"]})"));
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_TRUE(std::isnan(score(*r, "n1")));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "the query answered instance \"n1\" more than once; that node is left out");
}

TEST(PrometheusAnswer, FieldOrderDoesNotMatter) {
  auto r = prom(R"({"data":{"result":[{"value":[1,"0.3"],"metric":{"instance":"n1"}}],"resultType":"vector"},
                    "status":"success","warnings":["partial response"]})");
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_DOUBLE_EQ(score(*r, "n1"), 0.3);
  EXPECT_EQ(r->notes, (std::vector<std::string>{"prometheus metrics warnings: partial response"}));
}

}  // namespace
}  // namespace kdesched::usage
