// The per-request time limit (ClientConfig::requestTimeout) against a server that never answers: a
// fake transport that blocks until the request is cancelled, and a fake clock that moves only when
// the test advances it, so "cut at 30 s, not before" is checked exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "pkg/kube/client.h"
#include "test/unit/kube/fakes.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::HasSubstr;

class RequestTimeoutTest : public ::testing::Test {
 protected:
  RequestTimeoutTest() {
    clock_->blockingSleeps();
    ClientConfig cfg;
    cfg.server = "https://api:6443";
    cfg.qps = -1;
    cfg.requestTimeout = 30s;
    auto t = std::make_unique<FakeTransport>();
    transport_ = t.get();
    client_ = std::make_unique<Client>(cfg, std::move(t), clock_);
  }

  // The n-th request reached the transport and its timer waits on the clock: an advance now
  // reaches it (before the timer sleeps, an advance would be lost to it).
  bool inFlight(std::size_t n = 1) {
    return waitUntil([&] { return transport_->sent().size() >= n; }) && timerWaits();
  }
  bool timerWaits() {
    return waitUntil([&] { return clock_->sleepers() >= 1; });
  }
  template <typename T>
  static bool pending(std::future<T>& f) {
    return f.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout;
  }
  template <typename T>
  static bool done(std::future<T>& f) {
    return f.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  FakeTransport* transport_ = nullptr;
  std::unique_ptr<Client> client_;
};

TEST_F(RequestTimeoutTest, ARequestTheServerNeverAnswersIsCutAtTheTimeout) {
  transport_->onSend(Scripted::silence());
  auto get = std::async(std::launch::async, [&] { return client_->get("/api/v1/namespaces/default/pods/x"); });
  ASSERT_TRUE(inFlight());
  clock_->advance(29s);
  EXPECT_TRUE(pending(get)) << "cut before its 30 s";
  clock_->advance(1s);
  ASSERT_TRUE(done(get));
  auto r = get.get();
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.error().code, 0);
  EXPECT_FALSE(r.error().cancelled) << "the caller did not cancel: a timeout is a failure to report";
  EXPECT_THAT(r.error().describe(), HasSubstr("no answer within 30s: GET /api/v1/namespaces/default/pods/x"));
  // The transport's own inactivity timer stays behind ours, as a backstop.
  EXPECT_EQ(transport_->sent()[0].timeout, 35s);
}

TEST_F(RequestTimeoutTest, EachAttemptHasItsOwnLimitAndAnAnswerDisarmsIt) {
  transport_->onSend(Scripted::json("{}"));
  ASSERT_TRUE(client_->post("/apis/events.k8s.io/v1/namespaces/default/events", "{}").isOk());
  // The answered request's timer is gone: advancing past it cuts nothing later.
  clock_->advance(1h);
  transport_->onSend(Scripted::silence());
  auto post = std::async(std::launch::async, [&] { return client_->post("/api/v1/x", "{}"); });
  ASSERT_TRUE(inFlight(2));
  EXPECT_TRUE(pending(post)) << "a new attempt starts a new 30 s";
  clock_->advance(30s);
  ASSERT_TRUE(done(post));
  EXPECT_THAT(post.get().error().describe(), HasSubstr("no answer within 30s"));
}

TEST_F(RequestTimeoutTest, TheCallersCancellationStillCutsAtOnce) {
  transport_->onSend(Scripted::silence());
  Cancellation stop;
  RequestOptions o;
  o.cancel = &stop;
  auto get = std::async(std::launch::async, [&] { return client_->get("/api/v1/nodes", o); });
  ASSERT_TRUE(inFlight());
  stop.cancel();
  ASSERT_TRUE(done(get));
  auto r = get.get();
  EXPECT_TRUE(r.error().cancelled);
  EXPECT_THAT(r.error().describe(), ::testing::Not(HasSubstr("no answer within")));
}

TEST_F(RequestTimeoutTest, AListPageIsARequestLikeAnyOther) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "9", "next")));
  transport_->onSend(Scripted::silence());
  auto list = std::async(std::launch::async, [&] { return client_->list(kPods, ListOptions{}); });
  ASSERT_TRUE(inFlight(2));
  clock_->advance(30s);
  ASSERT_TRUE(done(list));
  EXPECT_THAT(list.get().error().describe(), HasSubstr("no answer within 30s: GET /api/v1/pods?limit=500&continue="));
}

TEST_F(RequestTimeoutTest, OpeningAWatchIsBoundedButTheOpenStreamIsNot) {
  transport_->onWatch(Scripted::silence());
  auto opening = std::async(std::launch::async, [&] { return client_->watch(kPods, WatchOptions{}); });
  ASSERT_TRUE(waitUntil([&] { return transport_->watched().size() == 1; }));
  ASSERT_TRUE(timerWaits());
  clock_->advance(30s);
  ASSERT_TRUE(done(opening));
  auto failed = opening.get();
  ASSERT_FALSE(failed.isOk());
  EXPECT_THAT(failed.error().describe(), HasSubstr("no answer within 30s: watch pods"));

  // Headers came: the watch lives on past the limit (the server ends it after timeoutSeconds).
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "11"))}, Scripted::End::Hang));
  auto w = client_->watch(kPods, WatchOptions{});
  ASSERT_TRUE(w.isOk()) << w.error().describe();
  clock_->advance(1h);
  WatchEvent ev;
  EXPECT_EQ((*w)->next(ev), WatchStream::Next::Event) << "the open stream was cut by the opening's limit";
  // The caller's cancellation still reaches the stream through the disarmed limit.
  Cancellation stop;
  transport_->onWatch(Scripted::watch({}, Scripted::End::Hang));
  auto w2 = client_->watch(kPods, WatchOptions{}, &stop);
  ASSERT_TRUE(w2.isOk());
  auto next = std::async(std::launch::async, [&] { return (*w2)->next(ev); });
  stop.cancel();
  ASSERT_TRUE(done(next));
  EXPECT_EQ(next.get(), WatchStream::Next::Broken);
}

TEST(RequestTimeout, ZeroLeavesOnlyTheTransportsTimer) {
  auto clock = std::make_shared<FakeClock>();
  ClientConfig cfg;
  cfg.server = "https://api:6443";
  cfg.requestTimeout = {};
  auto t = std::make_unique<FakeTransport>();
  FakeTransport& transport = *t;
  Client client(cfg, std::move(t), clock);
  transport.onSend(Scripted::json("{}"));
  ASSERT_TRUE(client.get("/api/v1/nodes").isOk());
  EXPECT_TRUE(clock->sleeps().empty()) << "no timer without a request timeout";
  EXPECT_EQ(transport.sent()[0].timeout, 60s);
}

TEST(FormatDuration, AsLogsPrintIt) {
  EXPECT_EQ(formatDuration(30s), "30s");
  EXPECT_EQ(formatDuration(1500ms), "1.5s");
  EXPECT_EQ(formatDuration(250ms), "250ms");
  EXPECT_EQ(formatDuration(2min), "120s");
}

}  // namespace
}  // namespace kdesched::kube::testing
