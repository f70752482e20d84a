#include "pkg/kube/reflector.h"

#include <cmath>

#include "pkg/base/log.h"

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
  bool needList = true;
  while (!cancel_.cancelled()) {
    if (needList) {
      if (!relist()) {
        backoff();
        continue;
      }
      if (options_.listOnly) return;
      needList = false;
    }
    switch (watchOnce()) {
      case After::Rewatch: break;
      case After::Backoff: backoff(); break;
      case After::Relist:
        // Through the backoff too, as client-go's BackoffUntil does: a server that keeps answering
        // 410 must not be relisted in a tight loop.
        needList = true;
        backoff();
        break;
      case After::Stop: return;
    }
  }
}

bool Reflector::relist() {
  // The first list, and the one after a 410, asks for the current state (""), in pages: the API
  // server ignores the page size of a resourceVersion="0" list and sends everything in one body
  // (120 MB of JSON for 30,000 pods, held twice while decoding), while "" is served page by page
  // (from its watch cache since Kubernetes 1.31). Otherwise "not older than what we saw", which
  // never goes back in time.
  std::string rv = lastResourceVersion();
  if (rvUnavailable_) rv.clear();
  ListOptions lo;
  lo.resourceVersion = rv;
  // Paging only for "" and "0": a paged list at a specific version goes to etcd and may 410.
  lo.limit = (rv.empty() || rv == "0") ? options_.pageSize : 0;
  const Clock::TimePoint start = clock_->now();
  auto listed = client_.list(resource_, lo, &cancel_);
  if (!listed.isOk()) {
    if (listed.error().cancelled || cancel_.cancelled()) return false;
    if (listed.error().isGone()) rvUnavailable_ = true;
    const std::string error = listed.error().describe();
    log::write(unlessRepeated("list " + error, log::Level::Warn), "reflector list failed",
               {{"resource", resource_.name}, {"requested_rv", rv}, {"error", error}});
    reportError({"list", listed.error().code, error});
    return false;
  }
  const double seconds = secondsBetween(start, clock_->now());
  const std::size_t count = listed->objects.size();
  const std::size_t deletes = store_.replace(resource_.kind, std::move(listed->objects));
  setResourceVersion(listed->resourceVersion);
  rvUnavailable_ = false;
  synced_.store(true);
  log::info("reflector listed", {{"resource", resource_.name},
                                 {"objects", count},
                                 {"vanished", deletes},
                                 {"pages", listed->pages},
                                 {"restarts", listed->restarts},
                                 {"rv", listed->resourceVersion},
                                 {"seconds", std::round(seconds * 1000) / 1000}});
  if (observer_) observer_->onList(resource_.kind, count, seconds);
  return true;
}

Reflector::After Reflector::watchOnce() {
  WatchOptions wo;
  wo.resourceVersion = lastResourceVersion();
  const double r = std::clamp(random_(), 0.0, 1.0);
  wo.timeout = options_.minWatchTimeout +
               std::chrono::seconds(static_cast<std::int64_t>(std::floor(r * options_.minWatchTimeout.count())));
  const Clock::TimePoint start = clock_->now();
  auto opened = client_.watch(resource_, wo, &cancel_);
  if (!opened.isOk()) {
    if (opened.error().cancelled || cancel_.cancelled()) return After::Stop;
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancel_.cancelled()) return After::Stop;
    current_ = stream.get();
  }
  lastLogged_.clear();  // working again: the next failure is news
  if (observer_) observer_->onWatchOpened(resource_.kind);
  const After after = handleStream(*stream, start);
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = nullptr;
  }
  return after;
}

Reflector::After Reflector::handleStream(WatchStream& stream, Clock::TimePoint start) {
  std::size_t events = 0;
  WatchEvent event;
  for (;;) {
    switch (stream.next(event)) {
      case WatchStream::Next::Event:
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
        restartWatch("closed", "closed by the server after " + std::to_string(events) + " events");
        return After::Rewatch;
      }
      case WatchStream::Next::Broken:
        if (cancel_.cancelled()) return After::Stop;
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

void Reflector::apply(WatchEvent& event) {
  switch (event.type) {
    case WatchEventType::Added:
    case WatchEventType::Modified:
      if (log::enabled(log::Level::Debug))
        log::debug("reflector event", {{"resource", resource_.name},
                                       {"type", toString(event.type)},
                                       {"key", keyOf(event.object)},
                                       {"rv", event.resourceVersion}});
      store_.upsert(std::move(event.object));
      break;
    case WatchEventType::Deleted: {
      const std::string key = keyOf(event.object);
      log::debug("reflector event",
                 {{"resource", resource_.name}, {"type", "DELETED"}, {"key", key}, {"rv", event.resourceVersion}});
      store_.remove(resource_.kind, key);
      break;
    }
    case WatchEventType::Bookmark:
    case WatchEventType::Error: break;
  }
  // Every event, bookmarks included, moves the resume point forward.
  setResourceVersion(std::move(event.resourceVersion));
  if (observer_) observer_->onEvent(resource_.kind, event.type);
}

void Reflector::backoff() {
  const Clock::Duration wait = backoff_.next();
  log::debug("reflector backoff", {{"resource", resource_.name},
                                   {"wait_ms", std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()}});
  clock_->sleepFor(wait, &cancel_);
}

void Reflector::restartWatch(const std::string& reason, const std::string& detail) {
  // A watch the server ended on schedule is routine: keep it out of the default log.
  const log::Level level = reason == "closed" ? log::Level::Debug : unlessRepeated(reason + detail, log::Level::Info);
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
