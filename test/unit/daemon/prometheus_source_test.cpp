// The Prometheus source over a scripted transport: the query's URL and its encoding, the bearer
// token (a Secret's, changed between cycles; the service account's, rotated), error answers and
// what is not a vector (down, metric 0), recovery (metric 1), and the URL checks.
#include "pkg/daemon/prometheus_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/daemon/usage_fakes.h"
#include "test/unit/kube/support.h"

namespace kdesched::testing {
namespace {

using daemon::PrometheusSource;
using daemon::SourceHealth;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kUp = "kdesched_usage_source_up{source=\"Prometheus\"}";
const std::string kQuery = R"(avg by (instance) (1 - rate(node_cpu_seconds_total{mode="idle"}[1m])))";
constexpr api::Timestamp kAt = 1767225600;

std::string vector(const std::string& samples) {
  return R"({"status":"success","data":{"resultType":"vector","result":[)" + samples + "]}}";
}
std::string sample(const std::string& node, const std::string& value) {
  return R"({"metric":{"instance":")" + node + R"("},"value":[1767225600,")" + value + R"("]})";
}
std::string secret(const std::string& token) {
  return R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"prom","namespace":"mon"},"data":{)"
         R"("prometheusAuthToken":")" +
         kube::testing::base64(token) + R"("}})";
}

struct Fixture {
  FakeApi api;  // the Kubernetes API (Secrets)
  FakeTransport* prom = nullptr;
  metrics::Metrics metrics{"test", {}};
  SourceHealth health{"Prometheus", "Prometheus", &metrics};
  std::unique_ptr<PrometheusSource> source;

  explicit Fixture(std::unique_ptr<kube::TokenSource> token = nullptr, const std::string& prefix = "") {
    auto t = std::make_unique<FakeTransport>();
    prom = t.get();
    // Blocking sleeps: the query's deadline timer waits for the test to move time, which it never does.
    api.clock->blockingSleeps();
    source = std::make_unique<PrometheusSource>(daemon::PrometheusUrl{"https://prom:9090", prefix}, std::move(t),
                                                std::move(token), api.clock, std::chrono::seconds(10), health);
  }
  std::string authorization(std::size_t i) { return kube::findHeader(prom->sent().at(i).headers, "Authorization"); }
};

TEST(PrometheusSource, AsksOneInstantQueryEncodedAtTheCyclesTime) {
  Fixture f(nullptr, "/prometheus");
  f.prom->onSend(Scripted::json(vector(sample("n1", "0.9") + "," + sample("n2", "0.2"))));
  usage::SourceReadings r = f.source->query(kQuery, kAt);
  ASSERT_FALSE(r.down) << *r.down;
  ASSERT_EQ(f.prom->sent().size(), 1u);
  EXPECT_EQ(f.prom->sent()[0].method, "GET");
  EXPECT_EQ(f.prom->sent()[0].target,
            "/prometheus/api/v1/query?query=avg%20by%20%28instance%29%20%281%20-%20rate%28node_cpu_seconds_total"
            "%7Bmode%3D%22idle%22%7D%5B1m%5D%29%29&time=1767225600");
  EXPECT_EQ(f.authorization(0), "");  // no token source: no header
  EXPECT_DOUBLE_EQ(*r.node(api::Symbol("n1"))->score, 0.9);
  EXPECT_EQ(r.node(api::Symbol("n2"))->takenAt, kAt);
  EXPECT_EQ(r.origin, "Prometheus");
  EXPECT_EQ(metricValue(f.metrics, kUp), 1);
}

TEST(PrometheusSource, SendsTheSecretsTokenAndPicksUpAChange) {
  FakeApi kubeApi;
  Fixture f(std::make_unique<daemon::SecretTokenSource>(*kubeApi.client, policy::SecretReference{"mon", "prom"}));
  kubeApi.transport->onSend(Scripted::json(secret("first-token")));
  kubeApi.transport->onSend(Scripted::json(secret("second-token")));
  f.prom->onSend(Scripted::json(vector(sample("n1", "0.5"))));
  f.prom->onSend(Scripted::json(vector(sample("n1", "0.5"))));
  EXPECT_FALSE(f.source->query(kQuery, kAt).down);
  EXPECT_FALSE(f.source->query(kQuery, kAt).down);
  EXPECT_EQ(f.authorization(0), "Bearer first-token");
  EXPECT_EQ(f.authorization(1), "Bearer second-token");
  ASSERT_EQ(kubeApi.transport->sent().size(), 2u);  // one GET per query
  EXPECT_EQ(kubeApi.transport->sent()[0].target, "/api/v1/namespaces/mon/secrets/prom");
}

TEST(PrometheusSource, ASecretWithoutTheTokenIsDownWithUpstreamsWords) {
  FakeApi kubeApi;
  Fixture f(std::make_unique<daemon::SecretTokenSource>(*kubeApi.client, policy::SecretReference{"mon", "prom"}));
  kubeApi.transport->onSend(Scripted::json(R"({"kind":"Secret","data":{"token":"eA=="}})"));
  kubeApi.transport->onSend(Scripted::json(apiStatus(404, "NotFound"), 404));
  usage::SourceReadings r = f.source->query(kQuery, kAt);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, HasSubstr("prometheus authentication token secret missing \"prometheusAuthToken\" data"));
  r = f.source->query(kQuery, kAt);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, HasSubstr("unable to get mon/prom secret: 404"));
  EXPECT_TRUE(f.prom->sent().empty());  // no query without the token it must carry
  EXPECT_EQ(metricValue(f.metrics, kUp), 0);
}

TEST(PrometheusSource, InAClusterSendsTheServiceAccountTokenAndPicksUpItsRotation) {
  kube::testing::TempDir dir;
  daemon::PrometheusEnvironment env;
  env.inCluster.emplace();
  env.inCluster->tokenFile = dir.write("token", "sa-token-1\n");
  env.inCluster->caData = "CLUSTER CA";
  FakeApi kubeApi;
  daemon::PrometheusAccess access = daemon::prometheusAccess(
      {"https://prom:9090", std::nullopt}, {"https://prom:9090", ""}, *kubeApi.client, kubeApi.clock, env);
  EXPECT_EQ(access.caData, "CLUSTER CA");
  EXPECT_EQ(access.auth, "service account token");
  Fixture f(std::move(access.token));
  f.prom->onSend(Scripted::json(vector(sample("n1", "0.5"))));
  f.prom->onSend(Scripted::json(vector(sample("n1", "0.5"))));
  EXPECT_FALSE(f.source->query(kQuery, kAt).down);
  dir.write("token", "sa-token-2\n");  // the kubelet rotated it
  EXPECT_FALSE(f.source->query(kQuery, kAt).down);
  EXPECT_EQ(f.authorization(0), "Bearer sa-token-1");
  EXPECT_EQ(f.authorization(1), "Bearer sa-token-2");
}

// The service account token may evict any pod: never over plain http unless asked (upstream sends
// it); a Prometheus that then answers 401 says why no token came and what to do.
TEST(PrometheusSource, InAClusterTheTokenGoesToAPlainHttpUrlOnlyWhenAsked) {
  kube::testing::TempDir dir;
  daemon::PrometheusEnvironment env;
  env.inCluster.emplace();
  env.inCluster->tokenFile = dir.write("token", "sa-token-1\n");
  FakeApi kubeApi;
  daemon::PrometheusAccess access = daemon::prometheusAccess(
      {"http://prom:9090", std::nullopt}, {"http://prom:9090", ""}, *kubeApi.client, kubeApi.clock, env);
  EXPECT_EQ(access.token, nullptr);
  EXPECT_EQ(access.auth, "none");
  EXPECT_THAT(access.withheld, HasSubstr("--prometheus-plain-http-token"));
  auto t = std::make_unique<FakeTransport>();
  FakeTransport* prom = t.get();
  kubeApi.clock->blockingSleeps();
  metrics::Metrics m{"test", {}};
  SourceHealth health{"Prometheus", "Prometheus", &m};
  PrometheusSource source(daemon::PrometheusUrl{"http://prom:9090", ""}, std::move(t), nullptr, kubeApi.clock,
                          std::chrono::seconds(10), health, access.withheld);
  prom->onSend(Scripted::json(R"({"status":"error","errorType":"unauthorized","error":"no token"})", 401));
  usage::SourceReadings r = source.query(kQuery, kAt);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, HasSubstr("does not send the service account token to a plain http:// Prometheus"));
  EXPECT_EQ(kube::findHeader(prom->sent().at(0).headers, "Authorization"), "");
  env.plainHttpToken = true;
  access = daemon::prometheusAccess({"http://prom:9090", std::nullopt}, {"http://prom:9090", ""}, *kubeApi.client,
                                    kubeApi.clock, env);
  EXPECT_NE(access.token, nullptr);
  EXPECT_EQ(access.auth, "service account token");
  EXPECT_EQ(access.withheld, "");
}

TEST(PrometheusSource, OutsideAClusterUsesNoTokenAndTheSystemsCas) {
  FakeApi kubeApi;
  daemon::PrometheusAccess access =
      daemon::prometheusAccess({"https://prom:9090", std::nullopt}, {"https://prom:9090", ""}, *kubeApi.client,
                               kubeApi.clock, daemon::PrometheusEnvironment{});
  EXPECT_EQ(access.token, nullptr);
  EXPECT_EQ(access.ca, "the system's");
  access =
      daemon::prometheusAccess({"http://prom:9090", policy::SecretReference{"mon", "prom"}}, {"http://prom:9090", ""},
                               *kubeApi.client, kubeApi.clock, daemon::PrometheusEnvironment{});
  EXPECT_NE(access.token, nullptr);
  EXPECT_EQ(access.caData, "");
  EXPECT_EQ(access.auth, "Secret mon/prom");
}

struct DownCase {
  std::string name;
  Scripted answer;
  std::string why;
};

class PrometheusSourceDown : public ::testing::TestWithParam<DownCase> {};

TEST_P(PrometheusSourceDown, AndRecovers) {
  Fixture f;
  f.prom->onSend(GetParam().answer);
  usage::SourceReadings r = f.source->query(kQuery, kAt);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, HasSubstr(GetParam().why));
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_EQ(metricValue(f.metrics, kUp), 0);
  f.prom->onSend(Scripted::json(vector(sample("n1", "0.5"))));
  EXPECT_FALSE(f.source->query(kQuery, kAt).down);
  EXPECT_EQ(metricValue(f.metrics, kUp), 1);
}

INSTANTIATE_TEST_SUITE_P(
    Table, PrometheusSourceDown,
    ::testing::Values(
        DownCase{"matrix", Scripted::json(R"({"status":"success","data":{"resultType":"matrix","result":[]}})"),
                 "expected query results to be of type \"vector\", got \"matrix\" instead"},
        DownCase{"errorAnswer",
                 Scripted::json(R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", 400),
                 "unable to capture prometheus metrics: bad_data: parse error at char 3"},
        DownCase{"outOfRange", Scripted::json(vector(sample("n1", "1.5"))), "outside of <0; 1> interval"},
        DownCase{"noInstance", Scripted::json(vector(R"({"metric":{},"value":[1,"0.5"]})")), "missing 'instance'"},
        DownCase{"unauthorized", Scripted::json("Unauthorized\n", 401), "HTTP 401 Unauthorized (check the token"},
        DownCase{"unreachable", Scripted::failure("connection refused"),
                 "Prometheus at https://prom:9090 did not answer: connection refused"},
        DownCase{"notJson", Scripted::json("<html>proxy</html>"),
                 "expected the JSON object a Prometheus /api/v1/query answers with"}),
    [](const auto& info) { return info.param.name; });

TEST(PrometheusSource, AProxysHtmlErrorPageIsQuotedByItsTitle) {
  Fixture f;
  // nginx's own 401 page, as a token-checking front answers.
  f.prom->onSend(Scripted::json(
      "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n<center><h1>401 "
      "Authorization Required</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n",
      401));
  auto r = f.source->query(kQuery, kAt);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, ::testing::EndsWith("(check the token it is given): 401 Authorization Required"));
  f.prom->onSend(Scripted::json("upstream\n  timed   out\n", 502));
  r = f.source->query(kQuery, kAt);
  ASSERT_TRUE(r.down);
  EXPECT_THAT(*r.down, ::testing::EndsWith(": upstream timed out"));
}

TEST(PrometheusSource, AServerThatNeverAnswersIsCutAtTheTimeout) {
  Fixture f;
  f.prom->onSend(Scripted::silence());
  std::optional<usage::SourceReadings> r;
  std::thread asking([&] { r = f.source->query(kQuery, kAt); });
  // The deadline's timer sleeps on the fake clock: move it past the 10 s once it waits.
  ASSERT_TRUE(kube::testing::waitUntil([&] { return !f.api.clock->sleeps().empty(); }));
  f.api.clock->advance(std::chrono::seconds(11));
  asking.join();
  ASSERT_TRUE(r->down);
  EXPECT_THAT(*r->down, HasSubstr("no answer within 10s"));
}

TEST(SplitPrometheusUrl, TakesTheServerAndThePathPrefix) {
  auto u = daemon::splitPrometheusUrl("https://prom.example:9090/prometheus/");
  ASSERT_TRUE(u.isOk()) << u.error();
  EXPECT_EQ(u->server, "https://prom.example:9090");
  EXPECT_EQ(u->pathPrefix, "/prometheus");
  u = daemon::splitPrometheusUrl("http://127.0.0.1:9090");
  ASSERT_TRUE(u.isOk());
  EXPECT_EQ(u->pathPrefix, "");
  EXPECT_THAT(daemon::splitPrometheusUrl("prom:9090").error(), HasSubstr("must start with http:// or https://"));
  EXPECT_THAT(daemon::splitPrometheusUrl("http://prom/?x=1").error(), HasSubstr("must not carry a query"));
  EXPECT_THAT(daemon::splitPrometheusUrl("http:///x").error(), HasSubstr("no host"));
}

// A password in the url's userinfo never reaches a log line or a message (Go's URL.Redacted form).
TEST(SplitPrometheusUrl, APasswordInTheUrlIsMaskedWhereverTheUrlIsShown) {
  EXPECT_EQ(daemon::redactedPrometheusUrl("https://ops:s3cret@prom:9090/api"), "https://ops:xxxxx@prom:9090/api");
  EXPECT_EQ(daemon::redactedPrometheusUrl("https://ops:p@ss@prom"), "https://ops:xxxxx@prom");
  EXPECT_EQ(daemon::redactedPrometheusUrl("https://ops@prom:9090"), "https://ops@prom:9090") << "no password";
  EXPECT_EQ(daemon::redactedPrometheusUrl("https://prom:9090/a@b"), "https://prom:9090/a@b") << "@ in the path";
  EXPECT_EQ(daemon::redactedPrometheusUrl("https://prom:9090"), "https://prom:9090");
  EXPECT_EQ(daemon::redactedPrometheusUrl("not a url"), "not a url");
  const std::string error = daemon::splitPrometheusUrl("https://ops:s3cret@prom/?x=1").error();
  EXPECT_THAT(error, HasSubstr("\"https://ops:xxxxx@prom/?x=1\""));
  EXPECT_THAT(error, Not(HasSubstr("s3cret")));
}

}  // namespace
}  // namespace kdesched::testing
