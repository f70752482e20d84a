// LeaderElector against a hung API server: every Lease request is bounded (renewDeadline per
// attempt, a few seconds for the release) and cut short by shutdown, so neither SIGTERM nor the
// loss of leadership waits out the HTTP client's timeout. The e2e twin is test/e2e/leader.sh.
#include "pkg/kube/leader_election.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "test/unit/kube/fakes.h"

namespace kdesched::kube::testing {
namespace {

using Ms = std::chrono::milliseconds;

ClientConfig config() {
  ClientConfig c;
  c.server = "https://127.0.0.1:6443";
  c.qps = 1000;
  c.burst = 1000;
  return c;
}

LeaderElectionConfig shortLease() {
  LeaderElectionConfig c;
  c.ns = "default";
  c.identity = "me";
  c.leaseDuration = Ms(1000);
  c.renewDeadline = Ms(300);
  c.retryPeriod = Ms(200);
  return c;
}

const std::string kLease = R"({"metadata":{"name":"descheduler","namespace":"default","resourceVersion":"7"},)"
                           R"("spec":{"holderIdentity":"me","leaseDurationSeconds":1,"leaseTransitions":0}})";

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Acquires through GET 404 + POST 201.
void scriptAcquire(FakeTransport& t) {
  t.onSend(Scripted::json(R"({"kind":"Status","code":404,"reason":"NotFound"})", 404));
  t.onSend(Scripted::json(kLease, 201));
}

TEST(LeaderElectorHung, AcquireReturnsAtOnceOnCancelWhileARequestHangs) {
  auto transport = std::make_unique<FakeTransport>();  // unscripted: every request hangs
  FakeTransport& t = *transport;
  Client client(config(), std::move(transport), systemClock());
  LeaderElectionConfig c = shortLease();
  c.renewDeadline = std::chrono::seconds(100);  // the attempt bound alone would not end it
  c.leaseDuration = std::chrono::seconds(120);
  LeaderElector e(client, c, systemClock());
  Cancellation cancel;
  auto acquired = std::async(std::launch::async, [&] { return e.acquire(cancel); });
  ASSERT_TRUE(waitUntil([&] { return t.sent().size() == 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  cancel.cancel();
  ASSERT_EQ(acquired.wait_for(std::chrono::seconds(3)), std::future_status::ready);
  EXPECT_FALSE(acquired.get());
  EXPECT_LT(since(t0), 1.0);
}

TEST(LeaderElectorHung, EachAttemptIsBoundedByTheRenewDeadline) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  Client client(config(), std::move(transport), systemClock());
  LeaderElector e(client, shortLease(), systemClock());
  Cancellation cancel;
  auto acquired = std::async(std::launch::async, [&] { return e.acquire(cancel); });
  // 300 ms per hung attempt + 200 ms between: three attempts well within 3 s.
  EXPECT_TRUE(waitUntil([&] { return t.sent().size() >= 3; }, Ms(3000)));
  cancel.cancel();
  EXPECT_FALSE(acquired.get());
}

TEST(LeaderElectorHung, LossIsNoticedWithinTheRenewDeadlineAndReleaseDoesNotHang) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  scriptAcquire(t);
  Client client(config(), std::move(transport), systemClock());
  LeaderElector e(client, shortLease(), systemClock());
  Cancellation cancel;
  ASSERT_TRUE(e.acquire(cancel));
  EXPECT_TRUE(e.isLeader());
  std::promise<void> lost;
  const auto t0 = std::chrono::steady_clock::now();
  e.startRenewing([&] { lost.set_value(); });
  // Renewals hang from now on: lost after the first bounded attempt past the renew deadline.
  ASSERT_EQ(lost.get_future().wait_for(std::chrono::seconds(3)), std::future_status::ready);
  EXPECT_LT(since(t0), 2.0);
  EXPECT_FALSE(e.isLeader());
  const auto t1 = std::chrono::steady_clock::now();
  e.release();  // not held any more: no request
  EXPECT_LT(since(t1), 0.5);
}

TEST(LeaderElectorHung, ReleaseCutsAHungRenewalAndBoundsItsOwnRequest) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  scriptAcquire(t);
  Client client(config(), std::move(transport), systemClock());
  LeaderElectionConfig c = shortLease();
  c.leaseDuration = std::chrono::seconds(60);
  c.renewDeadline = std::chrono::seconds(2);  // lost only if release() came 2 s late
  c.retryPeriod = Ms(100);
  LeaderElector e(client, c, systemClock());
  Cancellation cancel;
  ASSERT_TRUE(e.acquire(cancel));
  bool lostCalled = false;
  e.startRenewing([&] { lostCalled = true; });
  ASSERT_TRUE(waitUntil([&] { return t.sent().size() >= 3; }));  // a renewal GET is hanging
  const auto t0 = std::chrono::steady_clock::now();
  e.release();  // joins the renewer (cut by stop) and PUTs the release (hangs: bounded by 2 s)
  const double took = since(t0);
  EXPECT_LT(took, 4.0);
  EXPECT_GE(took, 1.5);
  EXPECT_FALSE(lostCalled);
  auto sent = t.sent();
  ASSERT_GE(sent.size(), 4u);
  EXPECT_EQ(sent.back().method, "PUT");
  EXPECT_THAT(sent.back().body, ::testing::HasSubstr(R"("holderIdentity":"")"));
  // From the version the create returned (no renewal succeeded since).
  EXPECT_THAT(sent.back().body, ::testing::HasSubstr(R"("resourceVersion":"7")"));
}

}  // namespace
}  // namespace kdesched::kube::testing
