// A stale cache in the live modes: what /readyz answers, and a one-shot run that the API server
// refuses a LIST (it ends at once with exit 1 and a message naming the resource and the verb; a
// daemon waits for the RBAC rule instead). Runtime runs against the scripted HTTP stub
// (test/stub/kube_stub.py) and a fake clock that moves only when the test advances it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <future>
#include <iostream>

#include "pkg/base/log.h"
#include "pkg/daemon/runtime.h"
#include "test/unit/kube/support.h"
#include "test/unit/testing/eventually.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/paths.h"

namespace kdesched::daemon {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

struct Leader : evictor::Leadership {
  bool leader = true;
  bool isLeader() const override { return leader; }
};

TEST(ReadinessOf, NamesWhatIsMissing) {
  Leader leader;
  struct Case {
    bool synced;
    std::string stale = "";
    const evictor::Leadership* leader = nullptr;
    bool ready;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {.synced = false, .ready = false, .reason = "caches not synced"},
      {.synced = false,
       .stale = "pods (list: 403 Forbidden: x)",
       .ready = false,
       .reason = "caches not synced: pods (list: 403 Forbidden: x)"},
      {.synced = true,
       .stale = "pods (watch: 403 Forbidden: x)",
       .ready = false,
       .reason = "cache stale: pods (watch: 403 Forbidden: x)"},
      {.synced = true,
       .stale = "pods (watch: 403 Forbidden: x)",
       .leader = &leader,
       .ready = false,
       .reason = "cache stale: pods (watch: 403 Forbidden: x)"},
      {.synced = true, .ready = true, .reason = "ok"},
      {.synced = true, .leader = &leader, .ready = true, .reason = "leader"},
  };
  for (const Case& c : cases) {
    const metrics::Readiness r = readinessOf(c.synced, c.stale, c.leader);
    EXPECT_EQ(r.ready, c.ready) << c.reason;
    EXPECT_EQ(r.reason, c.reason);
  }
  leader.leader = false;
  EXPECT_EQ(readinessOf(true, "", &leader).reason, "standby");
}

const char* kForbidden =
    R"(pods is forbidden: User "system:serviceaccount:kube-system:kdesched" cannot list resource "pods" in API group "" at the cluster scope)";

// Every cached resource lists empty and watches quietly, except pods: LIST refused.
json stubRules() {
  json rules = json::array();
  rules.push_back({{"method", "GET"},
                   {"path", "/api/v1/pods"},
                   {"responses", json::array({{{"status", 403},
                                               {"json",
                                                {{"kind", "Status"},
                                                 {"apiVersion", "v1"},
                                                 {"status", "Failure"},
                                                 {"reason", "Forbidden"},
                                                 {"code", 403},
                                                 {"message", kForbidden}}}}})}});
  for (const char* path : {"/api/v1/nodes", "/api/v1/namespaces", "/apis/policy/v1/poddisruptionbudgets",
                           "/api/v1/persistentvolumeclaims"}) {
    rules.push_back({{"method", "GET"},
                     {"path", path},
                     {"query", {{"watch", "true"}}},
                     {"responses", json::array({{{"status", 200}, {"stream", json::array()}, {"end", "hang"}}})}});
    rules.push_back({{"method", "GET"},
                     {"path", path},
                     {"responses", json::array({{{"status", 200},
                                                 {"json",
                                                  {{"kind", "List"},
                                                   {"apiVersion", "v1"},
                                                   {"metadata", {{"resourceVersion", "7"}}},
                                                   {"items", json::array()}}}}})}});
  }
  return rules;
}

class RefusedList : public ::testing::Test {
 protected:
  RefusedList() {
    stub_ =
        std::make_unique<kube::testing::StubProcess>(dir_.write("script.json", json{{"rules", stubRules()}}.dump()));
    options_.kubeconfig = dir_.write("kubeconfig", R"(apiVersion: v1
kind: Config
clusters:
- name: stub
  cluster: {server: ")" + stub_->url() + R"("}
users:
- name: kdesched
  user: {token: stub-token}
contexts:
- name: stub
  context: {cluster: stub, user: kdesched}
current-context: stub
)");
    options_.policyPath = std::string(kdesched::testing::sourceDir()) + "/examples/order-payment/policy.yaml";
    options_.port = 0;
    // The request timeout's timer would sleep on the fake clock too; the stub always answers.
    options_.requestTimeoutSeconds = 0;
    clock_->blockingSleeps();
    log::setWriter([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~RefusedList() override {
    log::setWriter(nullptr);
    if (HasFailure())
      for (const auto& l : lines_) std::cerr << "  log: " << l << "\n";
  }

  std::string logLine(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& l : lines_)
      if (l.find(text) != std::string::npos) return l;
    return "";
  }
  // The pods reflector was refused and has started its backoff (0.8-1.6 s with jitter, until the
  // clock moves), and the sync wait (50 ms at a time) is asleep too: an advance before it sleeps
  // would be lost to it.
  bool refusedAndBackingOff(Runtime& rt) {
    return kdesched::testing::eventually(
        [&] {
          const auto s = clock_->sleeps();
          return !rt.health().staleResources().empty() &&
                 std::any_of(s.begin(), s.end(), [](Clock::Duration d) { return d >= 800ms; }) &&
                 clock_->sleepers() >= 2;
        },
        30s);
  }

  kube::testing::TempDir dir_;
  std::unique_ptr<kube::testing::StubProcess> stub_;
  Options options_;
  std::shared_ptr<kdesched::testing::FakeClock> clock_ = std::make_shared<kdesched::testing::FakeClock>();
  Cancellation stop_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_F(RefusedList, AOneShotRunEndsAtOnceNamingTheResourceAndVerb) {
  options_.intervalSeconds = 0;
  auto rt = Runtime::create(options_, clock_, stop_);
  ASSERT_TRUE(rt);
  auto sync = std::async(std::launch::async, [&] { return rt->startCache(); });
  ASSERT_TRUE(refusedAndBackingOff(*rt));
  clock_->advance(50ms);  // the sync wait looks again
  ASSERT_EQ(sync.wait_for(30s), std::future_status::ready) << "a one-shot run must not wait out the sync timeout";
  EXPECT_EQ(sync.get(), Runtime::Sync::Refused);
  const std::string line = logLine("access to the cluster refused");
  EXPECT_THAT(line, HasSubstr("level=error"));
  EXPECT_THAT(line, HasSubstr("resource=pods verb=list reason=\"403 Forbidden: pods is forbidden: User "));
  EXPECT_THAT(line, HasSubstr("exit=1"));
  EXPECT_THAT(line, HasSubstr("hint=\"grant list on pods"));
  EXPECT_EQ(rt->finish(kExitFailure), kExitFailure);
}

TEST_F(RefusedList, ADaemonWaitsForTheRuleToBeApplied) {
  options_.intervalSeconds = 60;
  auto rt = Runtime::create(options_, clock_, stop_);
  ASSERT_TRUE(rt);
  auto sync = std::async(std::launch::async, [&] { return rt->startCache(); });
  ASSERT_TRUE(refusedAndBackingOff(*rt));
  // The sync wait goes round again (and sleeps again) instead of giving up.
  const std::size_t before = clock_->sleeps().size();
  clock_->advance(50ms);
  EXPECT_TRUE(kdesched::testing::eventually([&] { return clock_->sleeps().size() > before; }, 30s));
  stop_.cancel();
  ASSERT_EQ(sync.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(sync.get(), Runtime::Sync::Stopped);
  EXPECT_EQ(logLine("access to the cluster refused"), "");
  EXPECT_THAT(logLine("msg=\"cache stale\""), HasSubstr("resource=pods verb=list"));
  EXPECT_EQ(rt->finish(kExitOk), kExitOk);
}

}  // namespace
}  // namespace kdesched::daemon
