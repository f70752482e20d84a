// Waiting for something another thread does: polls a condition until it holds. The limit is a
// guard against a hang, not a timing window: a test passes as soon as the condition holds, however
// slow the machine, and fails only when it never does.
#pragma once

#include <chrono>
#include <functional>

#include "pkg/base/clock.h"

namespace kdesched::testing {

inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  Cancellation never;  // waitFor on it is a plain pause between polls
  const auto polls = limit.count();
  for (long long i = 0; i < polls; ++i) {
    if (condition()) return true;
    never.waitFor(std::chrono::milliseconds(1));
  }
  return condition();
}

}  // namespace kdesched::testing
