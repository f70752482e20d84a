// The daemon's wait on a stale cache: one warning per resource, including the resources that become
// stale only after the wait began (an API server restart refuses them one after another), then the
// cycle runs as soon as nothing is stale.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "pkg/base/log.h"
#include "pkg/daemon/stale_wait.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::daemon {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

kube::StaleResource staleOf(const std::string& resource) {
  return {resource, "watch", "403 Forbidden: " + resource + " is forbidden", true, 1};
}

class StaleWait : public ::testing::Test {
 protected:
  StaleWait() {
    log::setWriter([this](std::string_view line) { lines_.emplace_back(line); });
  }
  ~StaleWait() override { log::setWriter(nullptr); }

  std::vector<std::string> linesWith(const std::string& text) const {
    std::vector<std::string> out;
    for (const auto& l : lines_)
      if (l.find(text) != std::string::npos) out.push_back(l);
    return out;
  }
  // staleNow() answers each element of `script` in turn, then nothing stale.
  StaleNow scripted(std::vector<std::vector<std::string>> script) {
    return [this, script = std::move(script)] {
      std::vector<kube::StaleResource> out;
      if (calls_ < script.size())
        for (const auto& r : script[calls_]) out.push_back(staleOf(r));
      ++calls_;
      return out;
    };
  }

  kdesched::testing::FakeClock clock_;
  Cancellation stop_;
  std::vector<std::string> lines_;
  std::size_t calls_ = 0;
};

TEST_F(StaleWait, WarnsOncePerResourceIncludingThoseStaleLater) {
  ASSERT_TRUE(awaitFresh(clock_, stop_, scripted({{"nodes"}, {"nodes", "pods"}, {"pods"}, {"pods"}}), 50ms));
  const auto skipped = linesWith("msg=\"cache stale, skipping the cycle\"");
  ASSERT_EQ(skipped.size(), 2u) << ::testing::PrintToString(lines_);
  EXPECT_THAT(skipped[0], HasSubstr("resource=nodes verb=watch reason=\"403 Forbidden: nodes is forbidden\""));
  EXPECT_THAT(skipped[1], HasSubstr("resource=pods verb=watch reason=\"403 Forbidden: pods is forbidden\""));
  EXPECT_THAT(skipped[0], HasSubstr("level=warn"));
  const auto resynced = linesWith("msg=\"cache resynced, running the cycle\"");
  ASSERT_EQ(resynced.size(), 1u);
  EXPECT_THAT(resynced[0], HasSubstr("waited_seconds=0.2"));
  EXPECT_EQ(calls_, 5u);
  EXPECT_EQ(clock_.sleeps(), (std::vector<Clock::Duration>{50ms, 50ms, 50ms, 50ms}));
}

TEST_F(StaleWait, NothingStaleReturnsAtOnce) {
  ASSERT_TRUE(awaitFresh(clock_, stop_, scripted({}), 50ms));
  EXPECT_TRUE(linesWith("skipping the cycle").empty());
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(StaleWait, StoppedWhileStaleReturnsFalse) {
  std::size_t calls = 0;
  const StaleNow forever = [&] {
    if (++calls == 3) stop_.cancel();
    return std::vector<kube::StaleResource>{staleOf("pods")};
  };
  EXPECT_FALSE(awaitFresh(clock_, stop_, forever, 50ms));
  EXPECT_EQ(linesWith("skipping the cycle").size(), 1u);
  EXPECT_TRUE(linesWith("cache resynced").empty());
}

}  // namespace
}  // namespace kdesched::daemon
