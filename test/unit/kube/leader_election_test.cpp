// LeaderElector against a hung API server: every Lease request is bounded (renewDeadline per
// attempt, a few seconds for the release) and cut short by shutdown, so neither SIGTERM nor the
// loss of leadership waits out the HTTP client's timeout. The elector's waits and deadlines run on
// a fake clock that moves only when the test advances it, so "bounded by the renew deadline" is
// checked exactly, not against a stopwatch. The e2e twin is test/e2e/leader.sh.
#include "pkg/kube/leader_election.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "test/unit/kube/fakes.h"
#include "test/unit/kube/leader_election_fixture.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::kube::testing {
namespace {

using kdesched::testing::FakeClock;
using Ms = std::chrono::milliseconds;

const std::string kLease = R"({"metadata":{"name":"descheduler","namespace":"default","resourceVersion":"7"},)"
                           R"("spec":{"holderIdentity":"me","leaseDurationSeconds":1,"leaseTransitions":0}})";

// Acquires through GET 404 + POST 201.
void scriptAcquire(FakeTransport& t) {
  t.onSend(Scripted::json(R"({"kind":"Status","code":404,"reason":"NotFound"})", 404));
  t.onSend(Scripted::json(kLease, 201));
}

// Waits until the clock has seen `n` sleeps start (someone is now waiting on it).
bool sleepsStarted(FakeClock& clock, std::size_t n) {
  return waitUntil([&] { return clock.sleeps().size() >= n; });
}

bool ready(std::future<void>& f) { return f.wait_for(std::chrono::seconds(30)) == std::future_status::ready; }
bool ready(std::future<bool>& f) { return f.wait_for(std::chrono::seconds(30)) == std::future_status::ready; }

TEST(LeaderElectorHung, AcquireReturnsOnCancelWhileARequestHangs) {
  auto transport = std::make_unique<FakeTransport>();  // unscripted: every request hangs
  FakeTransport& t = *transport;
  Client client(clientConfig(), std::move(transport), systemClock());
  auto clock = blockingClock();
  LeaderElector e(client, shortLease(), clock);
  Cancellation cancel;
  auto acquired = std::async(std::launch::async, [&] { return e.acquire(cancel); });
  ASSERT_TRUE(waitUntil([&] { return t.sent().size() == 1; }));
  cancel.cancel();  // the clock never moved: only the cancel can end the request
  ASSERT_TRUE(ready(acquired));
  EXPECT_FALSE(acquired.get());
  EXPECT_EQ(t.sent().size(), 1u);
}

TEST(LeaderElectorHung, EachAttemptIsBoundedByTheRenewDeadline) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  Client client(clientConfig(), std::move(transport), systemClock());
  auto clock = blockingClock();
  const LeaderElectionConfig c = shortLease();
  LeaderElector e(client, c, clock);
  Cancellation cancel;
  auto acquired = std::async(std::launch::async, [&] { return e.acquire(cancel); });
  for (std::size_t attempt = 1; attempt <= 3; ++attempt) {
    // The attempt's GET hangs, under a deadline of renewDeadline; then the retry period.
    ASSERT_TRUE(waitUntil([&] { return t.sent().size() == attempt; }));
    ASSERT_TRUE(sleepsStarted(*clock, 2 * attempt - 1));
    EXPECT_EQ(clock->sleeps()[2 * attempt - 2], c.renewDeadline);
    clock->advance(c.renewDeadline);
    ASSERT_TRUE(sleepsStarted(*clock, 2 * attempt));
    EXPECT_EQ(clock->sleeps()[2 * attempt - 1], c.retryPeriod);
    clock->advance(c.retryPeriod);
  }
  ASSERT_TRUE(waitUntil([&] { return t.sent().size() == 4; }));
  cancel.cancel();
  ASSERT_TRUE(ready(acquired));
  EXPECT_FALSE(acquired.get());
}

TEST(LeaderElectorHung, LossIsNoticedAtTheRenewDeadlineAndReleaseSendsNothing) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  scriptAcquire(t);
  Client client(clientConfig(), std::move(transport), systemClock());
  auto clock = blockingClock();
  const LeaderElectionConfig c = shortLease();
  LeaderElector e(client, c, clock);
  Cancellation cancel;
  ASSERT_TRUE(e.acquire(cancel));
  EXPECT_TRUE(e.isLeader());
  const std::size_t before = clock->sleeps().size();  // the acquiring attempt's deadline
  std::promise<void> lost;
  e.startRenewing([&] { lost.set_value(); });
  // Renewals hang from now on: the retry period, then one attempt cut at its deadline.
  ASSERT_TRUE(sleepsStarted(*clock, before + 1));
  clock->advance(c.retryPeriod);
  ASSERT_TRUE(sleepsStarted(*clock, before + 2));
  EXPECT_TRUE(e.isLeader()) << "200 ms since the last renewal, under the 300 ms deadline";
  clock->advance(c.renewDeadline);
  auto lostFuture = lost.get_future();
  ASSERT_TRUE(ready(lostFuture));
  EXPECT_FALSE(e.isLeader());
  const std::size_t sent = t.sent().size();
  e.release();  // not held any more: no request
  EXPECT_EQ(t.sent().size(), sent);
}

TEST(LeaderElectorHung, ReleaseCutsAHungRenewalAndBoundsItsOwnRequest) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  scriptAcquire(t);
  Client client(clientConfig(), std::move(transport), systemClock());
  auto clock = blockingClock();
  LeaderElectionConfig c = shortLease();
  c.leaseDuration = std::chrono::seconds(60);
  c.renewDeadline = std::chrono::seconds(10);
  c.retryPeriod = Ms(100);
  LeaderElector e(client, c, clock);
  Cancellation cancel;
  ASSERT_TRUE(e.acquire(cancel));
  bool lostCalled = false;
  const std::size_t before = clock->sleeps().size();
  e.startRenewing([&] { lostCalled = true; });
  ASSERT_TRUE(sleepsStarted(*clock, before + 1));
  clock->advance(c.retryPeriod);
  ASSERT_TRUE(waitUntil([&] { return t.sent().size() >= 3; }));  // a renewal GET is hanging
  // release() cuts the renewal (stop), then PUTs the release, which hangs: bounded by 5 s.
  auto released = std::async(std::launch::async, [&] { e.release(); });
  ASSERT_TRUE(waitUntil([&] { return t.sent().size() >= 4; }));
  // The cut renewal's own deadline may or may not have started sleeping before it was cut.
  const bool bounded = waitUntil([&] {
    auto s = clock->sleeps();
    return s.size() >= before + 2 && s.back() == std::chrono::seconds(5);
  });
  clock->advance(std::chrono::seconds(5));
  ASSERT_TRUE(bounded) << "the release's request must be bounded by min(renewDeadline, 5 s)";
  ASSERT_TRUE(ready(released));
  EXPECT_FALSE(lostCalled);
  auto sent = t.sent();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent.back().method, "PUT");
  EXPECT_THAT(sent.back().body, ::testing::HasSubstr(R"("holderIdentity":"")"));
  // From the version the create returned (no renewal succeeded since).
  EXPECT_THAT(sent.back().body, ::testing::HasSubstr(R"("resourceVersion":"7")"));
}

// A renewal PUT that the stop cut short can still have been written by the server: the version the
// elector holds is then stale and the release PUT gets 409. It re-reads the lease once and releases
// from the version read, so the standby does not wait out leaseDuration (seen in leader.sh, once).
std::vector<FakeTransport::Seen> releaseAfterConflict(const std::string& leaseNow) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  scriptAcquire(t);
  t.onSend(Scripted::json(R"({"kind":"Status","code":409,"reason":"Conflict"})", 409));
  t.onSend(Scripted::json(leaseNow));
  t.onSend(Scripted::json(leaseNow));
  Client client(clientConfig(), std::move(transport), systemClock());
  LeaderElector e(client, shortLease(), blockingClock());
  Cancellation cancel;
  EXPECT_TRUE(e.acquire(cancel));
  e.release();
  return t.sent();
}

TEST(LeaderElectorRelease, AConflictRereadsTheLeaseAndReleasesFromItsVersion) {
  auto sent = releaseAfterConflict(R"({"metadata":{"resourceVersion":"9"},)"
                                   R"("spec":{"holderIdentity":"me","leaseDurationSeconds":1,"leaseTransitions":0}})");
  ASSERT_EQ(sent.size(), 5u);
  EXPECT_EQ(sent[2].method, "PUT");
  EXPECT_THAT(sent[2].body, ::testing::HasSubstr(R"("resourceVersion":"7")"));
  EXPECT_EQ(sent[3].method, "GET");
  EXPECT_EQ(sent[4].method, "PUT");
  EXPECT_THAT(sent[4].body, ::testing::HasSubstr(R"("holderIdentity":"")"));
  EXPECT_THAT(sent[4].body, ::testing::HasSubstr(R"("resourceVersion":"9")"));
}

TEST(LeaderElectorRelease, AConflictWithAnotherHolderReleasesNothing) {
  auto sent =
      releaseAfterConflict(R"({"metadata":{"resourceVersion":"9"},)"
                           R"("spec":{"holderIdentity":"other","leaseDurationSeconds":1,"leaseTransitions":1}})");
  ASSERT_EQ(sent.size(), 4u) << "the successor's lease is left alone";
  EXPECT_EQ(sent[3].method, "GET");
}

}  // namespace
}  // namespace kdesched::kube::testing
