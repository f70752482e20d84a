#include "pkg/daemon/sync_waker.h"

#include <gtest/gtest.h>

#include <thread>

#include "test/unit/testing/fake_clock.h"

namespace kdesched::daemon {
namespace {

using std::chrono::hours;

// A blocking fake clock and a thread asleep on the waker: the clock never moves, so only a wake-up
// (or the stop) can end the sleep, and the destructor's join hangs (the test times out) if none does.
struct Sleeping {
  Sleeping() {
    clock.blockingSleeps();
    sleeper = std::thread([this] { waker.sleep(clock, hours(1), stop); });
    while (clock.sleeps().empty()) std::this_thread::yield();
  }
  ~Sleeping() { sleeper.join(); }

  testing::FakeClock clock;
  Cancellation stop;
  SyncWaker waker;
  std::thread sleeper;
};

// The wait for the first sync ends when a reflector lists, not when the poll interval is up.
TEST(SyncWaker, AListEndsTheSleepAtOnce) {
  Sleeping s;
  s.waker.onList(api::Kind::Pod, 3, 0.01);
}

TEST(SyncWaker, AFailureEndsItToo) {
  Sleeping s;
  s.waker.onError(api::Kind::Node, kube::ReflectorFailure{});
}

// A list that lands between two checks is not lost: the next sleep returns at once.
TEST(SyncWaker, AWakeUpBeforeTheSleepIsKept) {
  testing::FakeClock clock;
  clock.blockingSleeps();
  Cancellation stop;
  SyncWaker waker;
  waker.onList(api::Kind::Pod, 3, 0.01);
  waker.sleep(clock, hours(1), stop);
  EXPECT_TRUE(clock.sleeps().empty());
}

TEST(SyncWaker, StopEndsTheSleep) {
  Sleeping s;
  s.stop.cancel();
}

}  // namespace
}  // namespace kdesched::daemon
