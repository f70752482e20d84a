#pragma once
// An in-memory evictor::EvictionApi for unit tests: records the Eviction requests, rollout restarts
// and Events it gets and answers each with a settable answer. Single-threaded (see
// async_events_test for a locked one).
#include <deque>
#include <string>
#include <vector>

#include "pkg/evictor/eviction_api.h"

namespace kdesched::testing {

struct FakeEvictionApi : evictor::EvictionApi {
  evictor::ApiAnswer answer{.status = 201, .reason = "", .message = ""};
  evictor::ApiAnswer restartAnswer{.status = 200, .reason = "", .message = ""};
  std::vector<evictor::EvictionRequest> requests;
  std::vector<evictor::RestartRequest> restarts;
  std::vector<evictor::PodEvent> events;
  // What each look-up of the pod finds, in turn; then: still there.
  std::deque<evictor::PodCheck> checks;
  int checked = 0;

  evictor::ApiAnswer evict(const evictor::EvictionRequest& r) override {
    requests.push_back(r);
    return answer;
  }
  evictor::ApiAnswer restartDeployment(const evictor::RestartRequest& r) override {
    restarts.push_back(r);
    return restartAnswer;
  }
  evictor::PodCheck checkPod(const std::string&, const std::string&, const std::string&) override {
    ++checked;
    if (checks.empty()) return {evictor::PodPresence::Present, "the same uid, not being deleted"};
    evictor::PodCheck c = checks.front();
    checks.pop_front();
    return c;
  }
  void recordEvent(const evictor::PodEvent& e) override { events.push_back(e); }
};

}  // namespace kdesched::testing
