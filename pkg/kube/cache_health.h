// The cache's health as the reflectors report it, in two ways a cycle must not decide on:
//  - relisting: a relist request (410 Gone, or a watch line that could not be decoded) means
//    events were lost, so that resource's cache is out of sync until the relist has replaced it;
//  - stale: a resource whose LIST or WATCH the API server refuses (401/403) at once, and one whose
//    LIST and WATCH have kept failing for longer than `staleAfter` (the API server unreachable or
//    broken; a watch cut for its silence, reflector.h, fails from the last word it carried). A
//    refused verb is cleared by that verb succeeding again (a LIST for "list", an accepted WATCH
//    for "watch": the reflector relists first, so the cache has been replaced by then); failures
//    end with any LIST or accepted WATCH. A resource is stale too while the API
//    server holds an object of it that kdesched cannot decode (reflector.h): no cycle can know
//    what that object would change.
// Staleness is worked out when asked (and on each report), on the injected clock. Each stale
// episode is logged at warning level once, with the resource, the RBAC verb and the API's answer,
// then again at most every minute while it lasts; its end at info. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pkg/evictor/live_conditions.h"
#include "pkg/kube/reflector.h"

namespace kdesched::kube {

// The default bound on continuous LIST/WATCH failures (--cache-stale-after): long enough for an
// API server restart or upgrade (the watches come back within seconds), short enough that a
// cycle never decides on a cache that has missed minutes of changes.
inline constexpr std::chrono::seconds kDefaultStaleAfter{120};

struct StaleResource {
  std::string resource;          // "pods"
  std::string verb;              // the RBAC verb of the request that failed: "list" or "watch"; "decode"
  std::string reason;            // the API server's answer, or what went wrong: "403 Forbidden: ..."
  bool denied = false;           // refused (401/403), not merely failing
  bool undecodable = false;      // objects kdesched cannot decode (verb "decode")
  double seconds = 0;            // since it was refused, or since the failures began
  std::string describe() const;  // "pods (watch: 403 Forbidden: ...)"
  std::string hint() const;      // what to do about it
};

class CacheHealth : public ReflectorObserver, public evictor::CacheFreshness {
 public:
  explicit CacheHealth(std::shared_ptr<Clock> clock = systemClock(), Clock::Duration staleAfter = kDefaultStaleAfter);

  void relistRequested(api::Kind kind);
  void listed(api::Kind kind);
  void onList(api::Kind kind, std::size_t, double) override;
  void onRelist(api::Kind kind, const std::string&) override { relistRequested(kind); }
  void onWatchOpened(api::Kind kind) override;
  void onError(api::Kind kind, const ReflectorFailure& failure) override;
  void onUndecodable(api::Kind kind, std::size_t count, const std::string& first) override;

  std::string relisting() const override;
  std::uint64_t relistRequests() const override;
  // The stale resources now, in kind order.
  std::vector<StaleResource> staleResources() const;
  std::string stale() const override;

 private:
  struct State {
    std::vector<std::pair<std::string, std::string>> denied;  // verb → the answer, in order
    Clock::TimePoint deniedSince{};
    std::optional<Clock::TimePoint> failingSince;
    std::string failedVerb, failure;  // the latest failure that was not a refusal
    std::size_t undecodable = 0;      // objects the API server holds that do not decode
    std::string firstUndecodable;     // "default/web: spec...: ..."
    Clock::TimePoint undecodableSince{};
    bool listed = false;             // the kind has listed once: a next list is a relist
    bool announced = false;          // this stale episode was logged
    Clock::TimePoint staleAt{};      // when it was first logged
    Clock::TimePoint announcedAt{};  // when it was last logged
  };
  std::optional<StaleResource> staleLocked(api::Kind kind, const State& s, Clock::TimePoint now) const;
  // Logs a change of `kind`'s staleness (and the minutely reminder); call with mu_ held.
  void noteLocked(api::Kind kind, State& s, Clock::TimePoint now) const;

  std::shared_ptr<Clock> clock_;
  Clock::Duration staleAfter_;
  mutable std::mutex mu_;
  std::set<api::Kind> pending_;
  std::uint64_t requests_ = 0;
  mutable std::map<api::Kind, State> states_;
};

}  // namespace kdesched::kube
