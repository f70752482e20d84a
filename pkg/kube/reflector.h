// Keeps one resource's objects in the Store in step with the API server, as client-go's Reflector
// does: sync (replace the store), then WATCH from the sync's resourceVersion applying each event;
// resume from the last resourceVersion seen (bookmarks advance it) when a watch ends; relist when
// the server says that version is gone (410) or a line cannot be decoded, and after a watch was
// refused (401/403: client-go's ListAndWatch returns on such an error and starts over with a
// LIST); back off exponentially on every other error and re-watch without relisting (a relist is
// the expensive request). Repeats of one failure are logged at debug within a minute: the cache's
// health (cache_health.h) says once, at warning level, what is missing.
//
// An object the API server sends that kdesched cannot decode is left out of the store (a LIST
// keeps the rest; a watch event removes the object's last readable state), logged with its key
// and the field, and counted: while any is known, observers hear onUndecodable with the count,
// and the cache's health calls the resource stale, so no cycle decides without it (a pod left out
// would make its node look emptier, a PDB left out would leave its pods unguarded). A later
// readable version or its deletion clears it; one without a readable name clears at a relist.
//
// A sync (the first, and every relist) is a watch-list where the server allows it, as client-go's
// WatchListClient does (KEP-3157): one WATCH with sendInitialEvents=true streams the state as
// ADDED events, decoded one by one into a staging set, and the store is replaced once, when the
// bookmark annotated k8s.io/initial-events-end arrives (its resourceVersion is where the watch goes
// on from); the same stream then goes on as the watch. Until that bookmark the store is untouched
// and the reflector not synced; a stream that breaks first is retried from scratch. The paged LIST
// stays as the fallback: for the rest of the process once the API server refuses the parameters
// (400/422: its WatchList gate is off), sends a change before the bookmark, or falls silent without
// it (watchListQuiet) kSilentStreams times in a row; for one sync after a 401/403 (the LIST's own
// answer counts: a one-shot run needs only "list"), after one such silence, or after
// kStreamAttempts failed streams in a row. Plain bookmarks among the initial events are skipped.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pkg/base/log.h"
#include "pkg/cluster/store.h"
#include "pkg/kube/backoff.h"
#include "pkg/kube/client.h"
#include "pkg/kube/stall_watchdog.h"

namespace kdesched::kube {

// The default bound on a watch's silence (--watch-silence-timeout): the API server's minutely
// bookmark plus a margin for a busy server.
inline constexpr std::chrono::seconds kDefaultSilentWatch{75};

struct ReflectorOptions {
  BackoffOptions backoff;
  // Each watch asks the server to end it after a random time in [min, 2 × min], so the watches of
  // many clients do not all restart together.
  std::chrono::seconds minWatchTimeout{300};
  // A watch that ends this quickly without an event is an error (client-go's "very short watch"):
  // re-watching at once would hot-loop against a server that closes every watch.
  std::chrono::milliseconds shortWatch{1000};
  std::int64_t pageSize = 500;
  // One sync, then stop: for a one-shot run, which decides on that state alone and never needs the
  // watch that would follow (so neither its RBAC verb nor its failures can get in the way).
  bool listOnly = false;
  // Sync by watch-list (see above) rather than a paged LIST, while the API server allows it.
  bool watchList = true;
  // A watch-list whose initial state goes this long without an event and without its closing
  // bookmark is cut and the paged LIST used instead (client-go warns after 10 s and waits on).
  // Zero: no bound.
  std::chrono::seconds watchListQuiet{30};
  // An open watch that carries no event and no bookmark this long is cut and opened again from the
  // last resourceVersion (a silent watch: see stall_watchdog.h). kdesched asks for bookmarks and the
  // API server's watch cache sends one a minute, so a live watch is never this quiet; a resource
  // served without the watch cache sends none and is merely re-watched this often. Zero: no bound.
  std::chrono::seconds silentWatch{kDefaultSilentWatch};
  std::shared_ptr<Clock> clock;    // null: the system clock
  std::function<double()> random;  // uniform [0, 1); null: seeded from the OS
};

// A LIST or WATCH that failed: the request's RBAC verb, the HTTP status, and what happened.
struct ReflectorFailure {
  std::string verb;  // "list" or "watch"
  int code = 0;      // the HTTP status or a watch ERROR event's code; 0: no answer, a broken stream
  std::string message;
  // A watch cut for its silence: how long nothing had come. The failure began that long ago.
  Clock::Duration silentFor{};
  // Refused for who we are (401) or what we may do (403): no retry helps until someone changes it.
  bool denied() const { return code == 401 || code == 403; }
};

// Hooks for metrics and the cache's health; called on the reflector's thread, so they must be
// quick. Restart and relist reasons are fixed tokens (bounded label values): closed, very_short,
// broken, open_failed, error_event, silent, gone, malformed.
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
  // The objects of `kind` kdesched cannot decode now: how many (0: none any more) and the first,
  // "default/web: spec.containers[0]...: invalid quantity \"1x\"".
  virtual void onUndecodable(api::Kind, std::size_t /*count*/, const std::string& /*first*/) {}
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
  void onUndecodable(api::Kind kind, std::size_t count, const std::string& first) override;

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
  // True once the first complete state (a LIST or a watch-list's initial events) was applied to
  // the store; stays true afterwards.
  bool synced() const { return synced_.load(); }
  // The resourceVersion the next watch resumes from.
  std::string lastResourceVersion() const;
  // The API server just answered another request (the daemon was granted the Lease): a backoff
  // wait in progress ends now and the loop retries at once, so a standby that becomes leader does
  // not sit out up to 30 s of a backoff left from an outage. The backoff's growth is kept: a
  // server that still fails this resource is not retried in a tight loop. No-op when not waiting.
  // `reason` is what the "reflector retries now" log line says.
  void retryNow(std::string reason);

 private:
  // What the loop does next. List: sync by the paged LIST now (no backoff).
  enum class After { Rewatch, Backoff, Relist, Stop, List };
  // A watch-list that failed this many times in a row gives way to one paged LIST.
  static constexpr int kStreamAttempts = 3;
  // Watch-lists silent without their closing bookmark in a row before the server counts as not
  // serving them (one could be a pause under load).
  static constexpr int kSilentStreams = 3;

  void run();
  // LIST into the store; false when it failed (and the error was reported).
  bool relist();
  // Replaces the store with a complete state (a LIST's or a watch-list's); returns the vanished.
  std::size_t replaceStore(ListResult& state);
  std::chrono::seconds watchTimeout();
  // Sets current_ (null: clears it); false when stop() came first.
  bool track(WatchStream* stream);
  // The sync by watch-list (reflector_stream.cpp), then the same stream as the watch; `needSync`
  // is cleared at its closing bookmark.
  bool streaming() const;
  After streamSync(bool& needSync);
  // Reads the initial events into `staged`; nullopt once the closing bookmark came.
  std::optional<After> streamInitial(WatchStream& stream, StallWatchdog& watchdog, ListResult& staged,
                                     std::size_t& events);
  After streamRefused(const ApiError& error);
  After streamFailed(ReflectorFailure failure);
  After refuseWatchList(const std::string& why);
  After silentStream(std::size_t events);
  After watchOnce();
  // `eventsBefore`: events the stream carried before (a watch-list's initial ones); `watchdog`
  // bounds the stream's silence (the stream's cancellation must follow it).
  After handleStream(WatchStream& stream, StallWatchdog& watchdog, Clock::TimePoint start,
                     std::size_t eventsBefore = 0);
  // The watchdog cut a silent watch (or its opening): say so and open it again.
  After silentWatch(Clock::Duration silence);
  void apply(WatchEvent& event);
  void applyUndecodable(WatchEvent& event);
  // A relist's objects that did not decode replace the ones known before.
  void listedUndecodable(const std::vector<UndecodableObject>& undecodable);
  void reportUndecodable();
  // Logs an object with saturated amounts (api::saturatedFields) the first time it is seen so,
  // at `logged` = warn (else debug); forgets it once it has none.
  void noteSaturated(const api::Object& object, bool logged = true);
  void listedSaturated(const std::vector<api::Object>& objects);
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
  std::shared_ptr<Cancellation> waking_;  // the backoff wait in progress, for retryNow (under mu_)
  std::string retryReason_;               // why retryNow ended it (under mu_)
  std::thread thread_;
  mutable std::mutex mu_;
  bool started_ = false;
  WatchStream* current_ = nullptr;  // the open watch, so stop() can cut it
  std::string lastRv_;
  // Sync by a watch-list from "" rather than from the last version: after a 410 that version is
  // useless, and after a refused watch the cache is to be replaced with the current state (it may
  // have missed changes for a long time). A LIST always reads "" (see relist()).
  bool rvUnavailable_ = false;
  bool listOnce_ = false;   // the next sync by LIST, then watch-list again
  int streamFailures_ = 0;  // watch-lists failed in a row
  int silentStreams_ = 0;   // watch-lists silent before their closing bookmark, in a row
  std::string lastLogged_;  // the last failure logged at its own level, and when
  Clock::TimePoint lastLoggedAt_{};
  std::atomic<bool> synced_{false};
  std::map<std::string, std::string> undecodable_;  // key → why it did not decode; reflector thread only
  std::set<std::string> saturated_;  // keys of the objects named for saturated amounts; reflector thread only
};

}  // namespace kdesched::kube
