// Keeps one resource's objects in the Store in step with the API server, as client-go's Reflector
// does: LIST (replace the store), then WATCH from the list's resourceVersion applying each event;
// resume from the last resourceVersion seen (bookmarks advance it) when a watch ends; relist when
// the server says that version is gone (410) or a line cannot be decoded, and after a watch was
// refused (401/403: client-go's ListAndWatch returns on such an error and starts over with a
// LIST); back off exponentially on every other error and re-watch without relisting (a relist is
// the expensive request). Repeats of one failure are logged at debug within a minute: the cache's
// health (cache_health.h) says once, at warning level, what is missing.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/base/log.h"
#include "pkg/cluster/store.h"
#include "pkg/kube/backoff.h"
#include "pkg/kube/client.h"

namespace kdesched::kube {

struct ReflectorOptions {
  BackoffOptions backoff;
  // Each watch asks the server to end it after a random time in [min, 2 × min], so the watches of
  // many clients do not all restart together.
  std::chrono::seconds minWatchTimeout{300};
  // A watch that ends this quickly without an event is an error (client-go's "very short watch"):
  // re-watching at once would hot-loop against a server that closes every watch.
  std::chrono::milliseconds shortWatch{1000};
  std::int64_t pageSize = 500;
  // One LIST, then stop: for a one-shot run, which decides on that list alone and never needs the
  // watch (so neither its RBAC verb nor its failures can get in the way).
  bool listOnly = false;
  std::shared_ptr<Clock> clock;    // null: the system clock
  std::function<double()> random;  // uniform [0, 1); null: seeded from the OS
};

// A LIST or WATCH that failed: the request's RBAC verb, the HTTP status, and what happened.
struct ReflectorFailure {
  std::string verb;  // "list" or "watch"
  int code = 0;      // the HTTP status or a watch ERROR event's code; 0: no answer, a broken stream
  std::string message;
  // Refused for who we are (401) or what we may do (403): no retry helps until someone changes it.
  bool denied() const { return code == 401 || code == 403; }
};

// Hooks for metrics and the cache's health; called on the reflector's thread, so they must be
// quick. Restart and relist reasons are fixed tokens (bounded label values): closed, very_short,
// broken, open_failed, error_event, gone, malformed.
class ReflectorObserver {
 public:
  virtual ~ReflectorObserver() = default;
  virtual void onList(api::Kind, std::size_t /*objects*/, double /*seconds*/) {}
  // The server accepted a watch: changes flow into the store again.
  virtual void onWatchOpened(api::Kind) {}
  virtual void onWatchRestart(api::Kind, const std::string& /*reason*/) {}
  virtual void onRelist(api::Kind, const std::string& /*reason*/) {}
  virtual void onEvent(api::Kind, WatchEventType) {}
  virtual void onError(api::Kind, const ReflectorFailure&) {}
};

// Several observers as one (a reflector takes one): each hears every call, in order.
class ReflectorObservers : public ReflectorObserver {
 public:
  explicit ReflectorObservers(std::vector<ReflectorObserver*> observers);  // null entries are left out
  void onList(api::Kind kind, std::size_t objects, double seconds) override;
  void onWatchOpened(api::Kind kind) override;
  void onWatchRestart(api::Kind kind, const std::string& reason) override;
  void onRelist(api::Kind kind, const std::string& reason) override;
  void onEvent(api::Kind kind, WatchEventType type) override;
  void onError(api::Kind kind, const ReflectorFailure& failure) override;

 private:
  std::vector<ReflectorObserver*> observers_;
};

class Reflector {
 public:
  // `client`, `store` and `observer` (may be null) must outlive the reflector.
  Reflector(Client& client, Resource resource, cluster::Store& store, ReflectorOptions options,
            ReflectorObserver* observer = nullptr);
  ~Reflector();  // stops
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Starts list+watch on its own thread. A reflector runs once: start() after stop() does nothing.
  void start();
  // Cancels the open request or watch and any wait, then joins. Idempotent.
  void stop();
  // True once the first complete LIST was applied to the store; stays true afterwards.
  bool synced() const { return synced_.load(); }
  // The resourceVersion the next watch resumes from.
  std::string lastResourceVersion() const;

 private:
  enum class After { Rewatch, Backoff, Relist, Stop };

  void run();
  // LIST into the store; false when it failed (and the error was reported).
  bool relist();
  After watchOnce();
  After handleStream(WatchStream& stream, Clock::TimePoint start);
  void apply(WatchEvent& event);
  void setResourceVersion(std::string rv);
  void backoff();
  // `reason` is a short fixed token for metrics labels; `detail` goes to the log only.
  void restartWatch(const std::string& reason, const std::string& detail);
  void requestRelist(const std::string& reason, const std::string& detail);
  void reportError(ReflectorFailure failure);
  // `level`, or debug when the same failure (`key`) was logged less than a minute ago.
  log::Level unlessRepeated(const std::string& key, log::Level level);

  Client& client_;
  Resource resource_;
  cluster::Store& store_;
  ReflectorOptions options_;
  ReflectorObserver* observer_;
  std::shared_ptr<Clock> clock_;
  std::function<double()> random_;
  Backoff backoff_;

  Cancellation cancel_;
  std::thread thread_;
  mutable std::mutex mu_;
  bool started_ = false;
  WatchStream* current_ = nullptr;  // the open watch, so stop() can cut it
  std::string lastRv_;
  // Relist with "" (a consistent read, in pages) rather than from the last version: after a 410
  // that version is useless, and after a refused watch the cache is to be replaced with the
  // current state (it may have missed changes for a long time).
  bool rvUnavailable_ = false;
  std::string lastLogged_;  // the last failure logged at its own level, and when
  Clock::TimePoint lastLoggedAt_{};
  std::atomic<bool> synced_{false};
};

}  // namespace kdesched::kube
