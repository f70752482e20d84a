#include "pkg/inspect/install.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test/unit/inspect/inspect_fixture.h"

namespace kdesched::inspect {
namespace {

using kube::testing::Scripted;
using ::testing::HasSubstr;

class InstalledPolicyTest : public InspectFixture {};

std::string configMaps(const std::vector<std::pair<std::string, std::string>>& namesAndPolicies) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& [name, policy] : namesAndPolicies) {
    nlohmann::json cm = {{"metadata", {{"name", name}}}, {"data", nlohmann::json::object()}};
    if (!policy.empty()) cm["data"]["policy.yaml"] = policy;
    items.push_back(cm);
  }
  return nlohmann::json{{"kind", "ConfigMapList"}, {"items", items}}.dump();
}

TEST_F(InstalledPolicyTest, TheChartsConfigMapIsFoundByItsLabels) {
  transport_->onSend(Scripted::json(configMaps({{"kdesched", "kind: DeschedulerPolicy\n"}})));
  auto found = findInstalledPolicy(*client_, {"kube-system", ""});
  ASSERT_TRUE(found.isOk()) << found.error();
  EXPECT_EQ(found->yaml, "kind: DeschedulerPolicy\n");
  EXPECT_EQ(found->source, "ConfigMap kube-system/kdesched (policy.yaml)");
  const auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].target, "/api/v1/namespaces/kube-system/configmaps?labelSelector=" +
                                kube::encodeQueryValue("app.kubernetes.io/name in (kdesched,descheduler)"));
}

TEST_F(InstalledPolicyTest, NoneFoundSaysWhatWasLookedForAndWhatToPass) {
  transport_->onSend(Scripted::json(configMaps({{"other", ""}})));
  auto found = findInstalledPolicy(*client_, {"ops", ""});
  ASSERT_FALSE(found.isOk());
  EXPECT_THAT(found.error(), HasSubstr("no DeschedulerPolicy found"));
  EXPECT_THAT(found.error(), HasSubstr("policy.yaml key labelled app.kubernetes.io/name=kdesched"));
  EXPECT_THAT(found.error(), HasSubstr("in namespace ops"));
  EXPECT_THAT(found.error(), HasSubstr("--policy-config-file FILE"));
}

TEST_F(InstalledPolicyTest, SeveralReleasesNeedReleaseAndTheReleaseNarrowsTheSelector) {
  transport_->onSend(Scripted::json(configMaps({{"a", "x: 1\n"}, {"b", "x: 2\n"}})));
  auto several = findInstalledPolicy(*client_, {"kube-system", ""});
  ASSERT_FALSE(several.isOk());
  EXPECT_THAT(several.error(), HasSubstr("ConfigMap kube-system/a (policy.yaml), ConfigMap kube-system/b"));
  EXPECT_THAT(several.error(), HasSubstr("--release NAME"));

  transport_->onSend(Scripted::json(configMaps({{"b", "x: 2\n"}})));
  auto one = findInstalledPolicy(*client_, {"kube-system", "b"});
  ASSERT_TRUE(one.isOk()) << one.error();
  EXPECT_THAT(transport_->sent().back().target,
              HasSubstr(kube::encodeQueryValue("app.kubernetes.io/name in (kdesched,descheduler),"
                                               "app.kubernetes.io/instance=b")));
}

TEST_F(InstalledPolicyTest, AForbiddenListIsAnErrorWithTheServersWords) {
  transport_->onSend(Scripted::json(
      R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"configmaps is forbidden: User \"x\" cannot list resource \"configmaps\""})",
      403));
  auto found = findInstalledPolicy(*client_, {"kube-system", ""});
  ASSERT_FALSE(found.isOk());
  EXPECT_THAT(found.error(), HasSubstr("cannot read configmaps in namespace kube-system"));
  EXPECT_THAT(found.error(), HasSubstr("cannot list resource"));
}

TEST(DaemonArgs, TheChartsFlagsInBothSpellings) {
  Workload w;
  readDaemonArgs({"--policy-config-file=/policy-dir/policy.yaml", "--leader-elect=true", "--leader-elect-resource-name",
                  "kd-lease", "--leader-elect-resource-namespace=ops", "--plain-http", "--secure-port=9443"},
                 w);
  EXPECT_TRUE(w.leaderElect);
  EXPECT_TRUE(w.plainHttp);
  EXPECT_EQ(w.leaseName, "kd-lease");
  EXPECT_EQ(w.leaseNs, "ops");
  EXPECT_EQ(w.securePort, 9443);

  Workload d;
  readDaemonArgs({"--leader-elect=false", "--descheduling-interval=5m"}, d);
  EXPECT_FALSE(d.leaderElect);
  EXPECT_FALSE(d.plainHttp);
  EXPECT_EQ(d.leaseName, "descheduler");
  EXPECT_EQ(d.leaseNs, "kube-system");
}

}  // namespace
}  // namespace kdesched::inspect
