#include <gtest/gtest.h>

#include "pkg/daemon/daemon.h"

namespace kdesched::daemon {
namespace {

// Upstream's one-shot run exits 0 when evictions fail on the server (a CronJob's Job is then not
// retried); kdesched does the same unless --fail-on-eviction-errors asks for exit 1.
TEST(OneShotExitCode, EvictionFailuresExitZeroAsUpstreamUnlessAskedOtherwise) {
  struct Case {
    int cycle;
    std::size_t hardFailures;
    bool stopped, failOnErrors;
    int want;
  };
  for (const Case& c : std::vector<Case>{
           {kExitOk, 0, false, false, kExitOk},
           {kExitOk, 3, false, false, kExitOk},            // upstream's behaviour
           {kExitOk, 3, false, true, kExitFailure},        // the opt-in
           {kExitOk, 0, false, true, kExitOk},             // nothing failed
           {kExitOk, 3, true, true, kExitOk},              // cut short by SIGTERM: not the server refusing
           {kExitFailure, 0, false, false, kExitFailure},  // the cache never synced: stays a failure
           {kExitFailure, 2, false, true, kExitFailure},
       }) {
    EXPECT_EQ(oneShotExitCode(c.cycle, c.hardFailures, c.stopped, c.failOnErrors), c.want)
        << c.cycle << " " << c.hardFailures << " " << c.stopped << " " << c.failOnErrors;
  }
}

}  // namespace
}  // namespace kdesched::daemon
