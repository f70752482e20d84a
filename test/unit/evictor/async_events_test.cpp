#include "pkg/evictor/async_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/unit/testing/fake_clock.h"

namespace kdesched::evictor {
namespace {

using ::testing::ElementsAre;

// Records Events; `onEvent` runs inside recordEvent (to block it, or to move the clock).
class RecordingApi final : public EvictionApi {
 public:
  std::function<void(const PodEvent&)> onEvent;
  ApiAnswer evict(const EvictionRequest& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    evicted_.push_back(r.name);
    return {.status = 201, .reason = "", .message = ""};
  }
  void recordEvent(const PodEvent& e) override {
    if (onEvent) onEvent(e);
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e.podName);
  }
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> evicted_, events_;
};

// Holds the sender inside recordEvent until released.
class Gate {
 public:
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  void waitUntilEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false, open_ = false;
};

PodEvent event(const std::string& pod) { return {"shop", pod, "uid-" + pod, "Normal", "P", "Descheduled", "n"}; }

// An eviction never waits for an Event: the sender is held inside one, evictions still answer.
TEST(AsyncEvents, AnEvictionDoesNotWaitForAnEvent) {
  RecordingApi api;
  Gate gate;
  api.onEvent = [&](const PodEvent&) { gate.wait(); };
  auto clock = std::make_shared<testing::FakeClock>();
  AsyncEvents events(api, clock);
  events.recordEvent(event("a"));
  gate.waitUntilEntered();
  events.recordEvent(event("b"));  // returns although the sender is busy
  EXPECT_EQ(events.evict({"shop", "c", "uid-c", std::nullopt, "r"}).status, 201);
  EXPECT_TRUE(api.events().empty());
  gate.open();
  events.drain(std::chrono::seconds(10));
  EXPECT_THAT(api.events(), ElementsAre("a", "b")) << "in order";
  EXPECT_EQ(events.dropped(), 0u);
}

TEST(AsyncEvents, BeyondTheQueuesCapacityEventsAreDroppedAndCounted) {
  RecordingApi api;
  Gate gate;
  api.onEvent = [&](const PodEvent&) { gate.wait(); };
  AsyncEvents events(api, std::make_shared<testing::FakeClock>(), nullptr, /*capacity=*/2);
  events.recordEvent(event("a"));
  gate.waitUntilEntered();  // "a" is being sent; the queue is empty
  for (const char* p : {"b", "c", "d", "e"}) events.recordEvent(event(p));
  EXPECT_EQ(events.dropped(), 2u);
  gate.open();
  events.drain(std::chrono::seconds(10));
  EXPECT_THAT(api.events(), ElementsAre("a", "b", "c"));
}

// A background Event ("why not") goes after every queued eviction Event, from its own small queue:
// a flood of them neither delays nor crowds out an eviction's Event; drain() does not wait for them.
TEST(AsyncEvents, BackgroundEventsGoLastFromTheirOwnQueue) {
  RecordingApi api;
  Gate gate;
  bool first = true;
  api.onEvent = [&](const PodEvent&) {
    if (first) gate.wait();
    first = false;
  };
  AsyncEvents events(api, std::make_shared<testing::FakeClock>(), nullptr, /*capacity=*/2);
  events.recordEvent(event("a"));
  gate.waitUntilEntered();
  for (std::size_t i = 0; i < AsyncEvents::kBackgroundCapacity + 5; ++i) {
    PodEvent e = event("why-" + std::to_string(i));
    e.background = true;
    events.recordEvent(e);
  }
  EXPECT_EQ(events.dropped(), 5u) << "beyond the background queue's own capacity";
  events.recordEvent(event("b"));
  events.recordEvent(event("c"));
  EXPECT_EQ(events.dropped(), 5u) << "the eviction Events still have their whole queue";
  gate.open();
  while (api.events().size() < 3 + AsyncEvents::kBackgroundCapacity) std::this_thread::yield();
  std::vector<std::string> sent = api.events();
  ASSERT_GE(sent.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(sent.begin(), sent.begin() + 4), ElementsAre("a", "b", "c", "why-0"));

  // Queued at exit, they are dropped, not waited for.
  Gate hold;
  bool held = false;
  api.onEvent = [&](const PodEvent&) {
    if (!held) {
      held = true;
      hold.wait();
    }
  };
  events.recordEvent(event("d"));
  hold.waitUntilEntered();
  PodEvent why = event("why-late");
  why.background = true;
  events.recordEvent(why);
  std::thread opener([&] {
    while (!events.draining()) std::this_thread::yield();
    hold.open();
  });
  events.drain(std::chrono::seconds(10));
  opener.join();
  EXPECT_EQ(api.events().back(), "d");
  EXPECT_EQ(events.dropped(), 6u);
}

// Each send takes 4 s of the clock; drain's 10 s cover the sends that start before the limit.
TEST(AsyncEvents, DrainSendsUntilItsLimitThenDropsTheRest) {
  RecordingApi api;
  auto clock = std::make_shared<testing::FakeClock>();
  Gate gate;
  bool first = true;
  api.onEvent = [&](const PodEvent&) {
    if (first) gate.wait();
    first = false;
    clock->advanceSeconds(4);
  };
  AsyncEvents events(api, clock);
  for (const char* p : {"a", "b", "c", "d", "e", "f"}) events.recordEvent(event(p));
  gate.waitUntilEntered();
  std::thread opener([&] {  // once drain() has set its deadline
    while (!events.draining()) std::this_thread::yield();
    gate.open();
  });
  events.drain(std::chrono::seconds(10));  // deadline = now + 10 s; "a" ends at +4, "b" +8, "c" +12
  opener.join();
  EXPECT_THAT(api.events(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(events.dropped(), 3u);
}

TEST(AsyncEvents, OnShutdownWhatIsQueuedIsDroppedNotSent) {
  RecordingApi api;
  Gate gate;
  api.onEvent = [&](const PodEvent&) { gate.wait(); };
  Cancellation stop;
  AsyncEvents events(api, std::make_shared<testing::FakeClock>(), &stop);
  events.recordEvent(event("a"));
  gate.waitUntilEntered();
  for (const char* p : {"b", "c"}) events.recordEvent(event(p));
  stop.cancel();
  gate.open();
  events.drain(std::chrono::seconds(10));
  EXPECT_THAT(api.events(), ElementsAre("a"));
  EXPECT_EQ(events.dropped(), 2u);
}

}  // namespace
}  // namespace kdesched::evictor
