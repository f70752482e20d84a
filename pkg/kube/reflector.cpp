#include "pkg/kube/reflector.h"

#include <cmath>

#include "pkg/base/log.h"
#include "pkg/kube/deadline.h"

namespace kdesched::kube {
namespace {

std::string keyOf(const api::Object& obj) {
  return std::visit([](const auto& o) { return cluster::objectKey(o); }, obj);
}

double secondsBetween(Clock::TimePoint a, Clock::TimePoint b) { return std::chrono::duration<double>(b - a).count(); }

// A failure repeated within this long is logged at debug: with the backoff capped at 30 s a
// refused LIST would otherwise warn twice a minute for as long as the RBAC rule is missing.
constexpr std::chrono::minutes kRepeatQuiet{1};

}  // namespace

ReflectorObservers::ReflectorObservers(std::vector<ReflectorObserver*> observers) {
  for (ReflectorObserver* o : observers)
    if (o) observers_.push_back(o);
}

void ReflectorObservers::onList(api::Kind kind, std::size_t objects, double seconds) {
  for (ReflectorObserver* o : observers_) o->onList(kind, objects, seconds);
}

void ReflectorObservers::onWatchOpened(api::Kind kind) {
  for (ReflectorObserver* o : observers_) o->onWatchOpened(kind);
}

void ReflectorObservers::onWatchRestart(api::Kind kind, const std::string& reason) {
  for (ReflectorObserver* o : observers_) o->onWatchRestart(kind, reason);
}

void ReflectorObservers::onRelist(api::Kind kind, const std::string& reason) {
  for (ReflectorObserver* o : observers_) o->onRelist(kind, reason);
}

void ReflectorObservers::onEvent(api::Kind kind, WatchEventType type) {
  for (ReflectorObserver* o : observers_) o->onEvent(kind, type);
}

void ReflectorObservers::onError(api::Kind kind, const ReflectorFailure& failure) {
  for (ReflectorObserver* o : observers_) o->onError(kind, failure);
}

void ReflectorObservers::onUndecodable(api::Kind kind, std::size_t count, const std::string& first) {
  for (ReflectorObserver* o : observers_) o->onUndecodable(kind, count, first);
}

Reflector::Reflector(Client& client, Resource resource, cluster::Store& store, ReflectorOptions options,
                     ReflectorObserver* observer)
    : client_(client),
      resource_(resource),
      store_(store),
      options_(std::move(options)),
      observer_(observer),
      clock_(options_.clock ? options_.clock : systemClock()),
      random_(options_.random ? options_.random : defaultRandom()),
      backoff_(options_.backoff, clock_, random_) {}

Reflector::~Reflector() { stop(); }

void Reflector::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void Reflector::stop() {
  cancel_.cancel();
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;  // a stopped reflector never starts
    if (current_) current_->cancel();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

std::string Reflector::lastResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lastRv_;
}

void Reflector::setResourceVersion(std::string rv) {
  std::lock_guard<std::mutex> lock(mu_);
  lastRv_ = std::move(rv);
}

void Reflector::run() {
  bool needSync = true;
  while (!cancel_.cancelled()) {
    After after;
    if (needSync && streaming()) {
      after = streamSync(needSync);
    } else {
      if (needSync) {
        if (!relist()) {
          backoff();
          continue;
        }
        if (options_.listOnly) return;
        needSync = false;
      }
      after = watchOnce();
    }
    switch (after) {
      case After::Rewatch:
      case After::List: break;
      case After::Backoff: backoff(); break;
      case After::Relist:
        // Through the backoff too, as client-go's BackoffUntil does: a server that keeps answering
        // 410 must not be relisted in a tight loop.
        needSync = true;
        backoff();
        break;
      case After::Stop: return;
    }
  }
}

bool Reflector::relist() {
  // Every list asks for the current state (""), in pages, whatever version the cache saw last: a
  // list at "0" ignores the page size and comes in one body (120 MB of JSON for 30,000 pods, held
  // twice while decoding), as does one at a specific version served from the watch cache, while a
  // paged one at a specific version goes to etcd and may 410. "" is a consistent read served page
  // by page (from the watch cache since Kubernetes 1.31), never older than what the cache has seen.
  ListOptions lo;
  lo.limit = options_.pageSize;
  const Clock::TimePoint start = clock_->now();
  auto listed = client_.list(resource_, lo, &cancel_);
  if (!listed.isOk()) {
    if (listed.error().cancelled || cancel_.cancelled()) return false;
    if (listed.error().isGone()) rvUnavailable_ = true;
    const std::string error = listed.error().describe();
    log::write(unlessRepeated("list " + error, log::Level::Warn), "reflector list failed",
               {{"resource", resource_.name}, {"error", error}});
    reportError({"list", listed.error().code, error});
    return false;
  }
  const double seconds = secondsBetween(start, clock_->now());
  const std::size_t count = listed->objects.size();
  const std::size_t deletes = replaceStore(*listed);
  listOnce_ = false;
  log::info("reflector listed", {{"resource", resource_.name},
                                 {"via", "list"},
                                 {"objects", count},
                                 {"vanished", deletes},
                                 {"undecodable", listed->undecodable.size()},
                                 {"pages", listed->pages},
                                 {"restarts", listed->restarts},
                                 {"wire", listed->protobuf ? "protobuf" : "json"},
                                 {"bytes", listed->bytes},
                                 {"rv", listed->resourceVersion},
                                 {"seconds", std::round(seconds * 1000) / 1000}});
  if (observer_) observer_->onList(resource_.kind, count, seconds);
  return true;
}

std::size_t Reflector::replaceStore(ListResult& state) {
  // The cache is stale before the store lacks an object, and fresh only once it is whole again:
  // a cycle checks the health, then takes its snapshot.
  const bool anyUndecodable = !state.undecodable.empty();
  listedSaturated(state.objects);
  if (anyUndecodable) listedUndecodable(state.undecodable);
  const std::size_t deletes = store_.replace(resource_.kind, std::move(state.objects));
  if (!anyUndecodable) listedUndecodable(state.undecodable);
  setResourceVersion(state.resourceVersion);
  rvUnavailable_ = false;
  synced_.store(true);
  return deletes;
}

std::chrono::seconds Reflector::watchTimeout() {
  const double r = std::clamp(random_(), 0.0, 1.0);
  return options_.minWatchTimeout +
         std::chrono::seconds(static_cast<std::int64_t>(std::floor(r * options_.minWatchTimeout.count())));
}

bool Reflector::track(WatchStream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stream && cancel_.cancelled()) return false;
  current_ = stream;
  return true;
}

Reflector::After Reflector::watchOnce() {
  WatchOptions wo;
  wo.resourceVersion = lastResourceVersion();
  wo.timeout = watchTimeout();
  const Clock::TimePoint start = clock_->now();
  // Declared before the stream: the stream's cancellation runs through it.
  StallWatchdog watchdog(&cancel_, options_.silentWatch, clock_);
  auto opened = client_.watch(resource_, wo, watchdog.get());
  if (!opened.isOk()) {
    if (cancel_.cancelled()) return After::Stop;
    if (watchdog.expired()) return silentWatch(watchdog.quiet());
    if (opened.error().cancelled) return After::Stop;
    if (opened.error().isGone()) {
      rvUnavailable_ = true;
      requestRelist("gone", "watch from rv=" + wo.resourceVersion + " refused: " + opened.error().describe());
      return After::Relist;
    }
    const std::string error = opened.error().describe();
    ReflectorFailure failure{"watch", opened.error().code, error};
    reportError(failure);
    restartWatch("open_failed", error);
    if (!failure.denied()) return After::Backoff;
    // Start over with a LIST once allowed again: the cache is replaced, not patched up.
    rvUnavailable_ = true;
    return After::Relist;
  }
  std::unique_ptr<WatchStream> stream = std::move(opened).value();
  if (!track(stream.get())) return After::Stop;
  lastLogged_.clear();  // working again: the next failure is news
  if (observer_) observer_->onWatchOpened(resource_.kind);
  watchdog.progress();  // the silence counts from the answer
  const After after = handleStream(*stream, watchdog, start);
  track(nullptr);
  return after;
}

Reflector::After Reflector::handleStream(WatchStream& stream, StallWatchdog& watchdog, Clock::TimePoint start,
                                         std::size_t eventsBefore) {
  std::size_t events = eventsBefore;
  WatchEvent event;
  for (;;) {
    switch (stream.next(event)) {
      case WatchStream::Next::Event:
        watchdog.progress();
        if (event.type == WatchEventType::Error) {
          if (observer_) observer_->onEvent(resource_.kind, event.type);
          if (event.error.isGone()) {
            rvUnavailable_ = true;
            requestRelist("gone", "watch ERROR event: " + event.error.describe());
            return After::Relist;
          }
          ReflectorFailure failure{"watch", event.error.code, "watch ERROR event: " + event.error.describe()};
          reportError(failure);
          restartWatch("error_event", event.error.describe());
          if (!failure.denied()) return After::Backoff;
          rvUnavailable_ = true;
          return After::Relist;
        }
        if (event.undecodable && event.undecodable->key.empty()) {
          // Not even its name decoded: which cached object it replaces is unknown, so relist.
          reportError({"watch", 0, "undecodable watch event: " + event.undecodable->error});
          requestRelist("malformed", event.undecodable->error);
          return After::Relist;
        }
        if (event.undecodable)
          applyUndecodable(event);
        else
          apply(event);
        ++events;
        continue;
      case WatchStream::Next::Closed: {
        if (cancel_.cancelled()) return After::Stop;
        const auto lasted = clock_->now() - start;
        if (events == 0 && lasted < options_.shortWatch) {
          reportError({"watch", 0,
                       "very short watch: closed after " + std::to_string(secondsBetween(start, clock_->now())) +
                           "s without an event"});
          restartWatch("very_short", "closed without events");
          return After::Backoff;
        }
        restartWatch("closed", "closed by the server after " + std::to_string(events - eventsBefore) + " events");
        return After::Rewatch;
      }
      case WatchStream::Next::Broken:
        if (cancel_.cancelled()) return After::Stop;
        if (watchdog.expired()) return silentWatch(watchdog.quiet());
        reportError({"watch", 0, "watch stream broken: " + stream.problem()});
        restartWatch("broken", stream.problem());
        return After::Backoff;
      case WatchStream::Next::Malformed:
        // We cannot tell what the line meant, so the store may now be missing a change: relist.
        reportError({"watch", 0, "malformed watch event: " + stream.problem()});
        requestRelist("malformed", stream.problem());
        return After::Relist;
    }
  }
}

Reflector::After Reflector::silentWatch(Clock::Duration silence) {
  // Nothing came, not even the minutely bookmark: the connection is most likely dead without a
  // word. What the cache missed meanwhile arrives with the new watch, from the last resourceVersion
  // (or a relist, if the server no longer has it). At once: backing off would only prolong it.
  const std::string why = "no event and no bookmark for " + formatDuration(silence);
  ReflectorFailure failure{"watch", 0, "silent watch: " + why};
  failure.silentFor = silence;
  reportError(std::move(failure));
  restartWatch("silent", why);
  return After::Rewatch;
}

void Reflector::apply(WatchEvent& event) {
  switch (event.type) {
    case WatchEventType::Added:
    case WatchEventType::Modified:
      if (log::enabled(log::Level::Debug))
        log::debug("reflector event", {{"resource", resource_.name},
                                       {"type", toString(event.type)},
                                       {"key", keyOf(event.object)},
                                       {"rv", event.resourceVersion}});
      noteSaturated(event.object);
      if (undecodable_.empty()) {
        store_.upsert(std::move(event.object));
      } else {
        const std::string key = keyOf(event.object);
        store_.upsert(std::move(event.object));
        if (undecodable_.erase(key)) reportUndecodable();  // after the readable version is in
      }
      break;
    case WatchEventType::Deleted: {
      const std::string key = keyOf(event.object);
      log::debug("reflector event",
                 {{"resource", resource_.name}, {"type", "DELETED"}, {"key", key}, {"rv", event.resourceVersion}});
      store_.remove(resource_.kind, key);
      saturated_.erase(key);
      if (undecodable_.erase(key)) reportUndecodable();
      break;
    }
    case WatchEventType::Bookmark:
    case WatchEventType::Error: break;
  }
  // Every event, bookmarks included, moves the resume point forward.
  setResourceVersion(std::move(event.resourceVersion));
  if (observer_) observer_->onEvent(resource_.kind, event.type);
}

// The object's last readable state is out of date either way, so it leaves the store; unless it
// was deleted, it is counted as undecodable until a readable version replaces it.
void Reflector::applyUndecodable(WatchEvent& event) {
  const UndecodableObject& u = *event.undecodable;
  if (event.type == WatchEventType::Deleted) {
    store_.remove(resource_.kind, u.key);
    if (undecodable_.erase(u.key)) reportUndecodable();
  } else {
    log::write(unlessRepeated("undecodable " + u.key + u.error, log::Level::Warn),
               "skipped an object kdesched cannot decode",
               {{"resource", resource_.name},
                {"kind", api::toString(resource_.kind)},
                {"object", u.key},
                {"error", u.error},
                {"type", toString(event.type)}});
    undecodable_[u.key] = u.error;
    reportUndecodable();  // stale first, then the store loses its last readable state
    store_.remove(resource_.kind, u.key);
  }
  setResourceVersion(std::move(event.resourceVersion));
  if (observer_) observer_->onEvent(resource_.kind, event.type);
}

void Reflector::listedUndecodable(const std::vector<UndecodableObject>& undecodable) {
  // One line each for the first few; a LIST of thousands of such pods must not flood the log.
  constexpr std::size_t kLogged = 10;
  const bool hadAny = !undecodable_.empty();
  undecodable_.clear();
  std::size_t unnamed = 0;
  for (std::size_t i = 0; i < undecodable.size(); ++i) {
    const UndecodableObject& u = undecodable[i];
    const std::string key =
        u.key.empty() ? "(an object without a readable name, " + std::to_string(++unnamed) + ")" : u.key;
    log::write(
        i < kLogged ? log::Level::Warn : log::Level::Debug, "skipped an object kdesched cannot decode",
        {{"resource", resource_.name}, {"kind", api::toString(resource_.kind)}, {"object", key}, {"error", u.error}});
    undecodable_[key] = u.error;
  }
  if (undecodable.size() > kLogged)
    log::warn("skipped more objects kdesched cannot decode",
              {{"resource", resource_.name}, {"count", undecodable.size()}, {"logged", kLogged}});
  if (hadAny || !undecodable_.empty()) reportUndecodable();
}

// A saturated amount is kept (the object stays in the store, the resource stays fresh) and named
// once: when the object is first seen saturated, not on every event or relist after that.
void Reflector::noteSaturated(const api::Object& object, bool logged) {
  const std::string fields = api::saturatedFields(object);
  if (fields.empty()) {
    if (!saturated_.empty()) saturated_.erase(keyOf(object));
    return;
  }
  const std::string key = keyOf(object);
  if (!saturated_.insert(key).second) return;
  log::write(logged ? log::Level::Warn : log::Level::Debug,
             "an amount beyond what kdesched represents is saturated; no eviction is decided on it",
             {{"resource", resource_.name},
              {"kind", api::toString(resource_.kind)},
              {"object", key},
              {"saturated", fields},
              {"saturated_to", std::to_string(api::kSaturatedMilli) + "m"}});
}

void Reflector::listedSaturated(const std::vector<api::Object>& objects) {
  // The first few of a relist each get a line; a LIST of thousands must not flood the log.
  constexpr std::size_t kLogged = 10;
  std::set<std::string> before = std::move(saturated_);
  saturated_.clear();
  std::size_t fresh = 0;
  for (const api::Object& o : objects) {
    if (api::saturatedFields(o).empty()) continue;
    const std::string key = keyOf(o);
    if (before.count(key))
      saturated_.insert(key);
    else
      noteSaturated(o, fresh++ < kLogged);
  }
  if (fresh > kLogged)
    log::warn("more objects have saturated amounts",
              {{"resource", resource_.name}, {"count", fresh}, {"logged", kLogged}});
}

void Reflector::reportUndecodable() {
  if (!observer_) return;
  const std::string first =
      undecodable_.empty() ? std::string() : undecodable_.begin()->first + ": " + undecodable_.begin()->second;
  observer_->onUndecodable(resource_.kind, undecodable_.size(), first);
}

void Reflector::backoff() {
  const Clock::Duration wait = backoff_.next();
  log::debug("reflector backoff", {{"resource", resource_.name},
                                   {"wait_ms", std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()}});
  // Ends at stop() or at retryNow(): the wait's own cancellation, which stop() cancels too (shared,
  // as a callback may run after the subscription ends).
  auto wake = std::make_shared<Cancellation>();
  CancelSubscription onStop(&cancel_, [wake] { wake->cancel(); });
  {
    std::lock_guard<std::mutex> lock(mu_);
    waking_ = wake;
  }
  clock_->sleepFor(wait, wake.get());
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waking_.reset();
    why = std::move(retryReason_);
    retryReason_.clear();
  }
  if (wake->cancelled() && !cancel_.cancelled())
    log::info("reflector retries now", {{"resource", resource_.name}, {"reason", why}});
}

void Reflector::retryNow(std::string reason) {
  std::shared_ptr<Cancellation> waking;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waking = waking_;
    if (waking) retryReason_ = std::move(reason);
  }
  if (waking) waking->cancel();
}

void Reflector::restartWatch(const std::string& reason, const std::string& detail) {
  // A watch the server ended on schedule is routine: keep it out of the default log.
  // A silent one is not: the cache missed changes for that long without knowing it.
  const log::Level level =
      reason == "closed" ? log::Level::Debug
                         : unlessRepeated(reason + detail, reason == "silent" ? log::Level::Warn : log::Level::Info);
  log::write(level, "reflector watch restart",
             {{"resource", resource_.name}, {"reason", reason}, {"rv", lastResourceVersion()}, {"detail", detail}});
  if (observer_) observer_->onWatchRestart(resource_.kind, reason);
}

void Reflector::requestRelist(const std::string& reason, const std::string& detail) {
  log::warn("reflector relist",
            {{"resource", resource_.name}, {"reason", reason}, {"rv", lastResourceVersion()}, {"detail", detail}});
  if (observer_) observer_->onRelist(resource_.kind, reason);
}

// Logged by the caller's restart/relist line; here only counted.
void Reflector::reportError(ReflectorFailure failure) {
  if (observer_) observer_->onError(resource_.kind, failure);
}

log::Level Reflector::unlessRepeated(const std::string& key, log::Level level) {
  const Clock::TimePoint now = clock_->now();
  if (key == lastLogged_ && now - lastLoggedAt_ < kRepeatQuiet) return log::Level::Debug;
  lastLogged_ = key;
  lastLoggedAt_ = now;
  return level;
}

}  // namespace kdesched::kube
