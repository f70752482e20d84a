#include "pkg/evictor/pipelined_sink.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/eventually.h"

namespace kdesched::testing {
namespace {

using framework::EvictResult;
using framework::Refusal;

// A primary whose answers are held until the test releases them, recording the most requests it
// ever had in flight at once.
class GatedPrimary : public evictor::Sink {
 public:
  EvictResult evict(const evictor::Decision& d) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++inFlight_;
    maxInFlight_ = std::max(maxInFlight_, inFlight_);
    ++started_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    --inFlight_;
    ++finished_;
    if (d.pod->name.find("refused") != std::string::npos)
      return EvictResult::refused(Refusal::Pdb, "api: PodDisruptionBudget", "no budget");
    return EvictResult::success();
  }
  void refused(const evictor::RefusedDecision&) override { ++refusals_; }
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool waitStarted(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return started_ >= n; });
  }
  int maxInFlight() {
    std::lock_guard<std::mutex> lock(mu_);
    return maxInFlight_;
  }
  int started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  int finished() {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }
  std::atomic<int> refusals_{0};

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int inFlight_ = 0, maxInFlight_ = 0, started_ = 0, finished_ = 0;
};

// An observer that checks it is only ever called from the thread that made the decisions.
class ThreadCheckingObserver : public evictor::Sink {
 public:
  explicit ThreadCheckingObserver(std::thread::id owner) : owner_(owner) {}
  EvictResult evict(const evictor::Decision& d) override {
    EXPECT_EQ(std::this_thread::get_id(), owner_);
    evicted.push_back(d.pod->name);
    return EvictResult::success();
  }
  void refused(const evictor::RefusedDecision& r) override {
    EXPECT_EQ(std::this_thread::get_id(), owner_);
    refused_.push_back(r.wanted.pod->name + ":" + std::string(framework::toString(r.result.refusal)));
  }
  std::vector<std::string> evicted, refused_;

 private:
  std::thread::id owner_;
};

evictor::Decision decision(const api::Pod& p) { return {&p, "node1", "LowNodeUtilization", "default", "overutilized"}; }

TEST(PipelinedSink, KeepsAtMostConcurrencyRequestsInFlightAndAnswersOptimistically) {
  GatedPrimary primary;
  std::vector<std::shared_ptr<const api::Pod>> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(PodBuilder("p" + std::to_string(i)).node("node1").build());
  evictor::PipelinedSink sink(primary, {}, 3);

  // Three go out at once; each answers "evicted" before the server did.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(sink.evict(decision(*pods[i])).evicted);
  ASSERT_TRUE(primary.waitStarted(3));
  EXPECT_EQ(sink.slotWaits(), 0u);

  // The fourth waits for a free slot: the server answers only once it is waiting, so it can only
  // return after an answer.
  std::thread server([&] {
    EXPECT_TRUE(eventually([&] { return sink.slotWaits() == 1; }));
    primary.open();
  });
  sink.evict(decision(*pods[3]));
  EXPECT_GE(primary.finished(), 1);
  server.join();
  auto flushed = sink.flush();
  EXPECT_EQ(flushed.succeeded, 4u);
  EXPECT_EQ(flushed.failed, 0u);
  EXPECT_EQ(primary.maxInFlight(), 3);
}

TEST(PipelinedSink, FlushDeliversLateFailuresOnTheCallersThread) {
  GatedPrimary primary;
  ThreadCheckingObserver observer(std::this_thread::get_id());
  auto ok = PodBuilder("ok").node("node1").build();
  auto refused = PodBuilder("refused").node("node1").build();
  std::vector<std::string> forgotten;
  evictor::PipelinedSink sink(primary, {&observer}, 4, [&](const evictor::Decision& d, const EvictResult& r) {
    EXPECT_EQ(r.refusal, Refusal::Pdb);
    forgotten.push_back(d.pod->name);
  });
  EXPECT_TRUE(sink.evict(decision(*ok)).evicted);
  EXPECT_TRUE(sink.evict(decision(*refused)).evicted) << "optimistic: the server has not answered";
  primary.open();
  auto flushed = sink.flush();
  EXPECT_EQ(flushed.succeeded, 1u);
  EXPECT_EQ(flushed.failed, 1u);
  EXPECT_EQ(observer.evicted, std::vector<std::string>{"ok"});
  EXPECT_EQ(observer.refused_, std::vector<std::string>{"refused:pdb"});
  EXPECT_EQ(forgotten, std::vector<std::string>{"refused"});
  // Counts restart after each flush.
  auto again = sink.flush();
  EXPECT_EQ(again.succeeded + again.failed, 0u);
}

TEST(PipelinedSink, ConcurrencyOneIsSynchronousAndReturnsTheServersAnswer) {
  GatedPrimary primary;
  primary.open();
  ThreadCheckingObserver observer(std::this_thread::get_id());
  auto refused = PodBuilder("refused").node("node1").build();
  int failedCalls = 0;
  evictor::PipelinedSink sink(primary, {&observer}, 1,
                              [&](const evictor::Decision&, const EvictResult&) { ++failedCalls; });
  EvictResult r = sink.evict(decision(*refused));
  EXPECT_FALSE(r.evicted);
  EXPECT_EQ(r.refusal, Refusal::Pdb);
  EXPECT_EQ(observer.refused_, std::vector<std::string>{"refused:pdb"}) << "reported at once";
  // The caller already has the real outcome: nothing is late, nothing to take back or recount
  // (the daemon subtracts late failures from the chain's evicted count).
  EXPECT_EQ(failedCalls, 0);
  auto flushed = sink.flush();
  EXPECT_EQ(flushed.failed, 0u);
  EXPECT_EQ(flushed.succeeded, 0u);
}

// Observers see outcomes in the order they happened: an answer that arrived before the chain
// refused the next pod is delivered before that refusal.
class OrderedLog : public evictor::Sink {
 public:
  EvictResult evict(const evictor::Decision& d) override {
    log.push_back("evicted " + d.pod->name);
    return EvictResult::success();
  }
  void refused(const evictor::RefusedDecision& r) override {
    log.push_back("refused " + r.wanted.pod->name + " " + std::string(framework::toString(r.result.refusal)));
  }
  std::vector<std::string> log;
};

TEST(PipelinedSink, ChainRefusalsReachPrimaryAndObserversAfterEarlierAnswers) {
  GatedPrimary primary;
  primary.open();
  OrderedLog observer;
  auto a = PodBuilder("a").node("node1").build();
  auto b = PodBuilder("b").node("node1").build();
  evictor::PipelinedSink sink(primary, {&observer}, 2);
  sink.evict(decision(*a));
  ASSERT_TRUE(eventually([&] { return sink.undelivered() == 1; }));  // a's answer is in
  sink.refused({decision(*b), EvictResult::refused(Refusal::NodeLimit, "maxNoOfPodsToEvictPerNode", "1 on node1")});
  EXPECT_EQ(primary.refusals_.load(), 1);
  sink.flush();
  EXPECT_EQ(observer.log, (std::vector<std::string>{"evicted a", "refused b limit-node"}));
}

TEST(PipelinedSink, DestructorWaitsForRequestsInFlightAndDeliversTheirAnswers) {
  GatedPrimary primary;
  OrderedLog observer;
  auto a = PodBuilder("a").node("node1").build();
  {
    evictor::PipelinedSink sink(primary, {&observer}, 2);
    sink.evict(decision(*a));
    ASSERT_TRUE(primary.waitStarted(1));
    EXPECT_TRUE(observer.log.empty());
    primary.open();
  }  // must not return (or crash) before the request answered, and must hand its answer on
  EXPECT_EQ(primary.finished(), 1);
  EXPECT_EQ(observer.log, std::vector<std::string>{"evicted a"});
}

}  // namespace
}  // namespace kdesched::testing
