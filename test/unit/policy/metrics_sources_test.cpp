// The policy's metrics sources (metricsCollector, metricsProviders): accepted as upstream v0.36
// accepts them, refused with upstream's messages (policyconfig.go) at kdesched's field paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/policy/policy.h"

namespace kdesched::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kHead = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n";

Result<DeschedulerPolicy> parse(const std::string& body) { return parsePolicy(kHead + body, "policy.yaml"); }

TEST(MetricsSources, UpstreamsReadmeExample) {
  auto p = parse(
      "metricsProviders:\n- source: Prometheus\n  prometheus:\n"
      "    url: http://prometheus-kube-prometheus-prometheus.prom.svc.cluster.local\n"
      "    authToken:\n      secretReference:\n        namespace: \"kube-system\"\n        name: \"authtoken\"\n");
  ASSERT_TRUE(p.isOk()) << p.error();
  EXPECT_THAT(p->warnings, IsEmpty());
  const PrometheusProvider* prom = p->prometheusProvider();
  ASSERT_NE(prom, nullptr);
  EXPECT_EQ(prom->url, "http://prometheus-kube-prometheus-prometheus.prom.svc.cluster.local");
  ASSERT_TRUE(prom->authTokenSecret.has_value());
  EXPECT_EQ(prom->authTokenSecret->ns, "kube-system");
  EXPECT_EQ(prom->authTokenSecret->name, "authtoken");
  EXPECT_FALSE(p->kubernetesMetricsConfigured());
}

TEST(MetricsSources, KubernetesMetricsEitherWay) {
  auto provider = parse("metricsProviders:\n- source: KubernetesMetrics\n");
  ASSERT_TRUE(provider.isOk()) << provider.error();
  EXPECT_TRUE(provider->kubernetesMetricsConfigured());
  EXPECT_EQ(provider->prometheusProvider(), nullptr);
  auto collector = parse("metricsCollector:\n  enabled: true\n");
  ASSERT_TRUE(collector.isOk()) << collector.error();
  EXPECT_TRUE(collector->kubernetesMetricsConfigured());
  auto off = parse("metricsCollector:\n  enabled: false\nmetricsProviders: []\n");
  ASSERT_TRUE(off.isOk()) << off.error();
  EXPECT_FALSE(off->kubernetesMetricsConfigured());
  // Both providers at once: each plugin picks its own.
  auto both = parse(
      "metricsProviders:\n- source: KubernetesMetrics\n- source: Prometheus\n  prometheus: {url: "
      "\"https://prom:9091\"}\n");
  ASSERT_TRUE(both.isOk()) << both.error();
  EXPECT_TRUE(both->kubernetesMetricsConfigured());
  EXPECT_NE(both->prometheusProvider(), nullptr);
  EXPECT_FALSE(both->prometheusProvider()->authTokenSecret.has_value());  // the in-cluster token
}

TEST(MetricsSources, WhatUpstreamAcceptsAndNeverUsesLoadsWithAWarning) {
  auto p = parse(
      "metricsCollector:\n  enabled: false\n  enabeld: true\n"
      "metricsProviders:\n- source: Datadog\n- source: KubernetesMetrics\n  prometheus: {url: x}\n  extra: 1\n");
  ASSERT_TRUE(p.isOk()) << p.error();
  EXPECT_THAT(p->warnings,
              ElementsAre("policy.yaml: metricsCollector.enabeld: unknown field, ignored (as upstream ignores it); did "
                          "you mean \"enabled\"?",
                          "policy.yaml: metricsProviders[0].source: \"Datadog\" is not a metrics source "
                          "(KubernetesMetrics, Prometheus); accepted and unused, as upstream accepts it",
                          "policy.yaml: metricsProviders[1].prometheus: ignored for source KubernetesMetrics, as "
                          "upstream ignores it",
                          "policy.yaml: metricsProviders[1].extra: unknown field, ignored (as upstream ignores it)"));
  EXPECT_TRUE(p->kubernetesMetricsConfigured());
}

struct Rejected {
  std::string name, yaml, error;
};

class MetricsSourcesRejected : public ::testing::TestWithParam<Rejected> {};

TEST_P(MetricsSourcesRejected, WithUpstreamsMessage) {
  auto p = parse(GetParam().yaml);
  ASSERT_FALSE(p.isOk()) << GetParam().yaml;
  EXPECT_EQ(p.error(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, MetricsSourcesRejected,
    ::testing::Values(
        Rejected{"duplicate_source", "metricsProviders:\n- source: KubernetesMetrics\n- source: KubernetesMetrics\n",
                 "policy.yaml: metricsProviders[1].source: metric provider \"KubernetesMetrics\" is already "
                 "configured, each source can be configured only once (also at metricsProviders[0])"},
        Rejected{"collector_and_provider",
                 "metricsCollector: {enabled: true}\nmetricsProviders:\n- source: KubernetesMetrics\n",
                 "policy.yaml: metricsProviders[0].source: it is not allowed to combine metrics provider when metrics "
                 "collector is enabled"},
        Rejected{"prometheus_without_config", "metricsProviders:\n- source: Prometheus\n",
                 "policy.yaml: metricsProviders[0].prometheus: prometheus configuration is required when prometheus "
                 "source is enabled"},
        Rejected{"prometheus_without_url", "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"\"}\n",
                 "policy.yaml: metricsProviders[0].prometheus.url: prometheus URL is required when prometheus is "
                 "enabled"},
        Rejected{"url_missing_scheme", "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"://prom\"}\n",
                 "policy.yaml: metricsProviders[0].prometheus.url: error parsing prometheus URL: parse \"://prom\": "
                 "missing protocol scheme"},
        Rejected{"url_bad_escape",
                 "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"http://prom/%zz\"}\n",
                 "policy.yaml: metricsProviders[0].prometheus.url: error parsing prometheus URL: parse "
                 "\"http://prom/%zz\": invalid URL escape \"%zz\""},
        Rejected{"url_bad_port", "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"http://prom:90a0\"}\n",
                 "policy.yaml: metricsProviders[0].prometheus.url: error parsing prometheus URL: parse "
                 "\"http://prom:90a0\": invalid port \":90a0\" after host"},
        Rejected{"auth_token_without_secret",
                 "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"http://p\", authToken: {}}\n",
                 "policy.yaml: metricsProviders[0].prometheus.authToken: prometheus authToken secret is expected to "
                 "be set when authToken field is"},
        Rejected{"secret_without_namespace",
                 "metricsProviders:\n- source: Prometheus\n  prometheus:\n    url: http://p\n    authToken:\n"
                 "      secretReference: {name: token}\n",
                 "policy.yaml: metricsProviders[0].prometheus.authToken.secretReference: prometheus authToken secret "
                 "reference does not set both namespace and name"},
        Rejected{"collector_not_a_mapping", "metricsCollector: true\n",
                 "policy.yaml: metricsCollector: must be a mapping, got true"},
        Rejected{"providers_not_a_list", "metricsProviders:\n  source: KubernetesMetrics\n",
                 "policy.yaml: metricsProviders: must be a list, got a mapping"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kdesched::policy
