#include "pkg/base/cpu_clock.h"

#include <time.h>

namespace kdesched {
namespace {

class SystemThreadCpuClock final : public ThreadCpuClock {
 public:
  Clock::Duration now() override {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return Clock::Duration(0);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }
};

}  // namespace

std::shared_ptr<ThreadCpuClock> systemThreadCpuClock() {
  static const auto clock = std::make_shared<SystemThreadCpuClock>();
  return clock;
}

}  // namespace kdesched
