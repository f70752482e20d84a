#include "pkg/inspect/status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "pkg/inspect/output.h"
#include "test/unit/inspect/inspect_fixture.h"

namespace kdesched::inspect {
namespace {

using kube::testing::Scripted;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr api::Timestamp kNow = 1800000000;  // 2027-01-15T08:00:00Z

// A LIST answer; a vector, since a braced list of one json value would be that value, not an array.
std::string list(const std::vector<nlohmann::json>& items) {
  return nlohmann::json{{"items", nlohmann::json(items)}}.dump();
}

nlohmann::json deployment(const std::vector<std::string>& args) {
  return {
      {"metadata", {{"name", "kdesched"}}},
      {"spec", {{"replicas", 2}, {"template", {{"spec", {{"containers", {{{"name", "kdesched"}, {"args", args}}}}}}}}}},
      {"status", {{"readyReplicas", 2}}}};
}

const char* kMetrics =
    "# TYPE descheduler_loop_duration_seconds histogram\n"
    "descheduler_loop_duration_seconds_bucket{le=\"+Inf\"} 12\n"
    "descheduler_loop_duration_seconds_count 12\n"
    "descheduler_pods_evicted_total{namespace=\"default\",node=\"n1\",profile=\"p\",result=\"success\",strategy=\"A\"} "
    "3\n"
    "descheduler_pods_evicted_total{namespace=\"default\",node=\"n2\",profile=\"p\",result=\"success\",strategy=\"A\"} "
    "1\n"
    "descheduler_pods_evicted_total{namespace=\"default\",node=\"n2\",profile=\"p\",result=\"error\",strategy=\"A\"} "
    "1\n"
    "kdesched_evictions_refused_total{profile=\"p\",reason=\"pdb\",strategy=\"A\"} 2\n"
    "kdesched_cache_stale{resource=\"pods\"} 1\n"
    "kdesched_cache_stale{resource=\"nodes\"} 0\n"
    "kdesched_last_successful_cycle_timestamp_seconds 1799999990\n"
    "descheduler_build_info{AppVersion=\"0.1.0\"} 1\n";

nlohmann::json event(const std::string& pod, const std::string& time) {
  return {{"eventTime", time},
          {"regarding", {{"kind", "Pod"}, {"namespace", "default"}, {"name", pod}}},
          {"reason", "RemovePodsViolatingInterPodAntiAffinity"},
          {"type", "Normal"},
          {"note", "pod eviction from n1 node by kdesched"},
          {"reportingController", "sigs.k8s.io.descheduler"},
          {"reportingInstance", "kdesched"}};
}

class StatusTest : public InspectFixture {
 protected:
  // The answers in the order readStatus asks: Deployments, the Lease, the holder's pod (not
  // there: the daemon runs elsewhere), Services, /metrics, Events.
  void scriptDaemon() {
    transport_->onSend(Scripted::json(list({deployment({"--leader-elect=true", "--leader-elect-resource-name=kd"})})));
    transport_->onSend(Scripted::json(R"({"spec":{"holderIdentity":"kdesched-7c9_abc","leaseDurationSeconds":137,
      "renewTime":"2027-01-15T07:59:55.000000Z","leaseTransitions":3}})"));
    transport_->onSend(Scripted::json(R"({"kind":"Status","code":404,"reason":"NotFound"})", 404));
    transport_->onSend(Scripted::json(list({{{"metadata", {{"name", "kdesched"}}},
                                             {"spec", {{"ports", {{{"name", "http-metrics"}, {"port", 10258}}}}}}}})));
    transport_->onSend(Scripted::json(kMetrics));
    transport_->onSend(Scripted::json(
        list({event("old", "2027-01-15T07:00:00.000000Z"), event("new", "2027-01-15T07:59:00.000000Z")})));
  }
};

TEST_F(StatusTest, ReadsTheLeaseTheMetricsThroughTheServiceProxyAndTheNewestEvents) {
  scriptDaemon();
  const DaemonStatus s = readStatus(*client_, {{"kube-system", ""}, 1}, kNow);
  EXPECT_TRUE(s.complete());
  EXPECT_FALSE(s.notInstalled());
  ASSERT_TRUE(s.workload);
  EXPECT_EQ(s.workload->readyReplicas, 2);
  EXPECT_TRUE(s.lease.found);
  EXPECT_EQ(s.lease.name, "kd");
  EXPECT_EQ(s.lease.holder, "kdesched-7c9_abc");
  EXPECT_EQ(*s.lease.ageSeconds, 5);
  EXPECT_FALSE(s.lease.expired);
  EXPECT_EQ(s.metrics.cycles, 12);
  EXPECT_EQ(s.metrics.evictions.at("success"), 4);
  EXPECT_EQ(s.metrics.evictions.at("error"), 1);
  EXPECT_EQ(s.metrics.refused.at("pdb"), 2);
  EXPECT_EQ(s.metrics.staleCaches, std::vector<std::string>{"pods"});
  EXPECT_EQ(*s.metrics.lastCycleAgeSeconds, 10);
  EXPECT_EQ(s.metrics.version, "0.1.0");
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].pod, "new");
  EXPECT_EQ(s.eventsTotal, 2u);

  const auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 6u);
  EXPECT_EQ(sent[1].target, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kd");
  EXPECT_EQ(sent[2].target, "/api/v1/namespaces/kube-system/pods/kdesched-7c9");
  EXPECT_EQ(sent[4].target, "/api/v1/namespaces/kube-system/services/https:kdesched:http-metrics/proxy/metrics");
  EXPECT_THAT(sent[5].target, HasSubstr("/apis/events.k8s.io/v1/events?"));
  EXPECT_THAT(sent[5].target, HasSubstr("fieldSelector=reportingController%3Dsigs.k8s.io.descheduler"));

  std::ostringstream table;
  writeStatusTable(s, false, table);
  EXPECT_THAT(table.str(), HasSubstr("Deployment kdesched, 2/2 ready, leader election on"));
  EXPECT_THAT(table.str(), HasSubstr("kube-system/kd held by kdesched-7c9_abc, renewed 5s ago"));
  EXPECT_THAT(table.str(), HasSubstr("12 cycles, last successful 10s ago"));
  EXPECT_THAT(table.str(), HasSubstr("evictions: error 1, success 4"));
  EXPECT_THAT(table.str(), HasSubstr("cache:     STALE: pods"));
  EXPECT_THAT(table.str(), HasSubstr("60s        default    new"));

  const auto j = statusJson(s);
  EXPECT_EQ(j["lease"]["state"], "found");
  EXPECT_EQ(j["metrics"]["evictions"]["success"], 4);
  EXPECT_EQ(j["events"][0]["pod"], "new");
}

TEST_F(StatusTest, TheLeadersPodIsReadThroughThePodProxyNotAnyReplicaOfTheService) {
  transport_->onSend(Scripted::json(list({deployment({"--leader-elect=true", "--secure-port=9443"})})));
  transport_->onSend(Scripted::json(R"({"spec":{"holderIdentity":"kdesched-7c9-x2_0f3a","leaseDurationSeconds":137,
    "renewTime":"2027-01-15T07:59:58Z"}})"));
  transport_->onSend(Scripted::json(R"({"kind":"Pod","metadata":{"name":"kdesched-7c9-x2"}})"));
  transport_->onSend(Scripted::json(kMetrics));
  transport_->onSend(Scripted::json(list({})));
  const DaemonStatus s = readStatus(*client_, {{"kube-system", ""}, 10}, kNow);
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.metrics.cycles, 12);
  EXPECT_EQ(s.metrics.via, "/api/v1/namespaces/kube-system/pods/https:kdesched-7c9-x2:9443/proxy/metrics");
  const auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 5u);
  EXPECT_EQ(sent[3].target, s.metrics.via);
}

TEST_F(StatusTest, APartThatCannotBeReadIsAnErrorAndTheOthersAreStillShown) {
  transport_->onSend(Scripted::json(list({deployment({"--leader-elect=true", "--plain-http"})})));
  transport_->onSend(Scripted::json(R"({"spec":{"holderIdentity":"x","leaseDurationSeconds":15,
    "renewTime":"2027-01-15T07:50:00Z"}})"));
  transport_->onSend(
      Scripted::json(list({{{"metadata", {{"name", "kd"}}}, {"spec", {{"ports", {{{"port", 10258}}}}}}}})));
  transport_->onSend(Scripted::json(R"({"kind":"Status","code":503,"reason":"ServiceUnavailable",
    "message":"no endpoints available for service \"http:kd:10258\""})",
                                    503));
  transport_->onSend(Scripted::json(list({})));
  const DaemonStatus s = readStatus(*client_, {{"kube-system", ""}, 10}, kNow);
  EXPECT_FALSE(s.complete());
  EXPECT_TRUE(s.lease.expired);
  EXPECT_THAT(s.metrics.error, HasSubstr("/api/v1/namespaces/kube-system/services/http:kd:10258/proxy/metrics"));
  EXPECT_THAT(s.metrics.error, HasSubstr("no endpoints available"));
  std::ostringstream table;
  writeStatusTable(s, false, table);
  EXPECT_THAT(table.str(), HasSubstr("EXPIRED, no replica is leading"));
  EXPECT_THAT(table.str(), HasSubstr("Events:  none by kdesched"));
}

TEST_F(StatusTest, ACronJobHasNoLeaseAndNoMetricsAndNothingFoundIsNotInstalled) {
  transport_->onSend(Scripted::json(list({})));
  transport_->onSend(Scripted::json(
      list({{{"metadata", {{"name", "kdesched"}}}, {"status", {{"lastScheduleTime", "2027-01-15T07:58:00Z"}}}}})));
  transport_->onSend(Scripted::json(list({})));
  const DaemonStatus cron = readStatus(*client_, {{"kube-system", ""}, 10}, kNow);
  EXPECT_TRUE(cron.complete());
  EXPECT_FALSE(cron.notInstalled());
  EXPECT_THAT(cron.lease.absent, HasSubstr("CronJob"));
  EXPECT_THAT(cron.metrics.absent, HasSubstr("CronJob"));
  EXPECT_EQ(transport_->sent().size(), 3u);  // deployments, cronjobs, events: no Lease, no proxy

  transport_->onSend(Scripted::json(list({})));
  transport_->onSend(Scripted::json(list({})));
  transport_->onSend(Scripted::json(R"({"kind":"Status","code":404,"reason":"NotFound"})", 404));
  transport_->onSend(Scripted::json(list({})));
  transport_->onSend(Scripted::json(list({})));
  const DaemonStatus none = readStatus(*client_, {{"ops", ""}, 10}, kNow);
  EXPECT_TRUE(none.notInstalled());
  EXPECT_THAT(none.lease.absent, HasSubstr("no Lease kube-system/descheduler"));
}

TEST(HumanAge, AsKubectlShowsAges) {
  EXPECT_EQ(humanAge(4.7), "4s");
  EXPECT_EQ(humanAge(119), "119s");
  EXPECT_EQ(humanAge(190), "3m10s");
  EXPECT_EQ(humanAge(3600), "60m");
  EXPECT_EQ(humanAge(5 * 3600 + 120), "5h2m");
  EXPECT_EQ(humanAge(86400 * 3 + 3600 * 4), "3d4h");
  EXPECT_EQ(humanAge(-3), "0s");
}

TEST(YamlOutput, QuotesWhatYamlWouldReadAsAnotherType) {
  nlohmann::ordered_json j{{"a", "true"},        {"b", "1.5"},  {"c", ""},
                           {"d", "plain words"}, {"e", "k: v"}, {"f", 3},
                           {"g", nullptr},       {"h", {1, 2}}, {"t", "2026-12-06T23:51:19.722Z"}};
  std::ostringstream out;
  writeYaml(j, out);
  EXPECT_EQ(out.str(),
            "a: \"true\"\nb: \"1.5\"\nc: \"\"\nd: plain words\ne: \"k: v\"\nf: 3\ng: ~\nh:\n  - 1\n  - 2\n"
            "t: \"2026-12-06T23:51:19.722Z\"\n");
}

}  // namespace
}  // namespace kdesched::inspect
