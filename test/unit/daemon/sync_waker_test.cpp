#include "pkg/daemon/sync_waker.h"

#include <gtest/gtest.h>

#include <thread>

#include "test/unit/testing/fake_clock.h"

namespace kdesched::daemon {
namespace {

using std::chrono::hours;

// The wait for the first sync ends when a reflector lists, not when the poll interval is up: the
// clock never moves here, so only the wake-up can end the sleep.
TEST(SyncWaker, AListEndsTheSleepAtOnce) {
  testing::FakeClock clock;
  clock.blockingSleeps();
  Cancellation stop;
  SyncWaker waker;
  std::thread sleeper([&] { waker.sleep(clock, hours(1), stop); });
  while (clock.sleeps().empty()) std::this_thread::yield();
  waker.onList(api::Kind::Pod, 3, 0.01);
  sleeper.join();
}

TEST(SyncWaker, AFailureEndsItToo) {
  testing::FakeClock clock;
  clock.blockingSleeps();
  Cancellation stop;
  SyncWaker waker;
  std::thread sleeper([&] { waker.sleep(clock, hours(1), stop); });
  while (clock.sleeps().empty()) std::this_thread::yield();
  waker.onError(api::Kind::Node, kube::ReflectorFailure{});
  sleeper.join();
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
  testing::FakeClock clock;
  clock.blockingSleeps();
  Cancellation stop;
  SyncWaker waker;
  std::thread sleeper([&] { waker.sleep(clock, hours(1), stop); });
  while (clock.sleeps().empty()) std::this_thread::yield();
  stop.cancel();
  sleeper.join();
}

}  // namespace
}  // namespace kdesched::daemon
