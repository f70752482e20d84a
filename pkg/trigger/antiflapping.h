// Anti-flapping across cycles and triggered runs: a per-owner eviction ledger (controller UID →
// recent evictions, their nodes and rules, and where the replacements landed), a cooldown per
// owner, a global eviction rate limit, and exponential backoff with a "DeschedulingGaveUp" report
// when evicting an owner's pods keeps recreating the same situation.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "pkg/base/clock.h"
#include "pkg/evictor/evictor.h"
#include "pkg/policy/extension.h"

namespace kdesched::trigger {

class AntiFlapping : public evictor::EvictionGate {
 public:
  // Called once when an owner enters backoff: metrics and the DeschedulingGaveUp Event.
  struct PodRef {
    std::string ns, name, uid;
  };
  using GaveUp = std::function<void(const PodRef& pod, int flaps, double backoffSeconds)>;
  using Suppressed = std::function<void(const std::string& reason)>;

  AntiFlapping(policy::AntiFlappingConfig config, std::shared_ptr<Clock> clock, GaveUp gaveUp = nullptr,
               Suppressed suppressed = nullptr);

  framework::EvictResult admit(const evictor::Decision& d) override;
  void evicted(const evictor::Decision& d) override;
  // The owner cooldown never cuts the set one run planned against one snapshot (upstream evicts
  // that whole set in one cycle): it starts when the run ends, and gates later runs only.
  void runStarted() override;
  void runFinished() override;
  // A pod of `ownerUid` was bound to `node` (from the store's events): if it replaces a pod we
  // evicted from that same node, it is a flap.
  void replacementBound(const std::string& ownerUid, const std::string& node, const PodRef& replacement);

  // For tests and /debug: flaps counted for an owner, whether it is in backoff, and how many
  // owners the ledger holds.
  int flaps(const std::string& ownerUid) const;
  bool inBackoff(const std::string& ownerUid) const;
  std::size_t ledgerSize() const;

 private:
  struct Owner {
    double lastEviction = -1e18;
    double lastEvictionWall = -1e18;  // Unix seconds, to compare with pods' creationTimestamp
    std::uint64_t lastRun = 0;        // the run that evicted last (0: outside any run)
    std::string lastNode;
    std::string lastRule;
    bool awaitingReplacement = false;
    bool lastCounted = false;  // the last eviction was already counted as a flap
    int flaps = 0;
    int backoffs = 0;
    double backoffUntil = -1e18;
  };
  struct GaveUpNotice {
    PodRef pod;
    int flaps;
    double backoff;
  };
  // Counts a flap; returns the notice to deliver (outside the lock) when the owner enters backoff.
  std::optional<GaveUpNotice> flap(Owner& o, const PodRef& pod);
  void deliver(const std::optional<GaveUpNotice>& n);
  static std::string ownerOf(const api::Pod& p);
  static std::string ruleOf(const std::string& reason);
  double nowSeconds() const;  // monotonic
  // Forgets owners quiet for the ledger's memory (see forgetAfter) since their last eviction and
  // the end of their backoff. Holds mu_.
  void forgetQuietOwners(double now);
  double forgetAfter() const;

  policy::AntiFlappingConfig config_;
  std::shared_ptr<Clock> clock_;
  GaveUp gaveUp_;
  Suppressed suppressed_;
  mutable std::mutex mu_;
  std::map<std::string, Owner> owners_;
  std::deque<double> recent_;  // eviction times within the last minute
  std::uint64_t run_ = 0;      // runs started so far
  bool inRun_ = false;
};

}  // namespace kdesched::trigger
