// The reflector's sync by watch-list (reflector.h): one WATCH that streams the current state, then
// goes on as the watch.
#include <cmath>

#include "pkg/base/log.h"
#include "pkg/kube/deadline.h"
#include "pkg/kube/reflector.h"

namespace kdesched::kube {
namespace {

double secondsBetween(Clock::TimePoint a, Clock::TimePoint b) { return std::chrono::duration<double>(b - a).count(); }

// Refusals of the request itself: sendInitialEvents unknown or forbidden (the API server's
// WatchList gate off answers 422 Invalid, "sendInitialEvents is forbidden for watch unless the
// WatchList feature gate is enabled").
bool refusesParameters(const ApiError& e) { return e.code == 400 || e.code == 422; }

}  // namespace

bool Reflector::streaming() const { return options_.watchList && !listOnce_ && !client_.watchListRefused(); }

Reflector::After Reflector::streamSync(bool& needSync) {
  WatchOptions wo;
  wo.sendInitialEvents = true;
  // "" (omitted): the newest state, a consistent read, as client-go asks for it; after a malformed
  // line, not older than what was seen.
  if (!rvUnavailable_) wo.resourceVersion = lastResourceVersion();
  wo.timeout = watchTimeout();
  // Declared before the stream: the stream's cancellation runs through it.
  StallWatchdog watchdog(&cancel_, options_.watchListQuiet, clock_);
  const Clock::TimePoint start = clock_->now();
  auto opened = client_.watch(resource_, wo, watchdog.get());
  if (!opened.isOk()) {
    if (cancel_.cancelled()) return After::Stop;
    // Opening is the request time limit's to bound; a longer one may meet the watchdog first.
    if (watchdog.expired())
      return streamFailed(
          {"watch", 0, "no answer to the watch-list within " + formatDuration(options_.watchListQuiet)});
    return streamRefused(opened.error());
  }
  watchdog.progress();  // the silence counts from the answer
  std::unique_ptr<WatchStream> stream = std::move(opened).value();
  if (!track(stream.get())) return After::Stop;
  ListResult staged;
  std::size_t events = 0;
  if (std::optional<After> failed = streamInitial(*stream, watchdog, staged, events)) {
    track(nullptr);
    return *failed;
  }
  // From here the same stream is the watch: its silence has the watch's bound.
  watchdog.rearm(options_.silentWatch);
  const double seconds = secondsBetween(start, clock_->now());
  const std::size_t count = staged.objects.size();
  const std::string rv = staged.resourceVersion;
  const std::size_t deletes = replaceStore(staged);
  needSync = false;
  streamFailures_ = 0;
  silentStreams_ = 0;
  lastLogged_.clear();
  log::info("reflector listed", {{"resource", resource_.name},
                                 {"via", "watch-list"},
                                 {"objects", count},
                                 {"vanished", deletes},
                                 {"undecodable", staged.undecodable.size()},
                                 {"events", events},
                                 {"wire", stream->protobuf() ? "protobuf" : "json"},
                                 {"bytes", stream->bytes()},
                                 {"rv", rv},
                                 {"seconds", std::round(seconds * 1000) / 1000}});
  if (observer_) {
    observer_->onList(resource_.kind, count, seconds);
    observer_->onWatchOpened(resource_.kind);
  }
  // A one-shot run has its state; the stream is cut as it goes out of scope.
  const After after = options_.listOnly ? After::Stop : handleStream(*stream, watchdog, start, events);
  track(nullptr);
  return after;
}

std::optional<Reflector::After> Reflector::streamInitial(WatchStream& stream, StallWatchdog& watchdog,
                                                         ListResult& staged, std::size_t& events) {
  WatchEvent event;
  for (;;) {
    switch (stream.next(event)) {
      case WatchStream::Next::Event:
        watchdog.progress();
        ++events;
        if (event.type == WatchEventType::Added) {
          if (event.undecodable)
            staged.undecodable.push_back(std::move(*event.undecodable));
          else
            staged.objects.push_back(std::move(event.object));
          continue;
        }
        if (event.type == WatchEventType::Bookmark && event.initialEventsEnd) {
          staged.resourceVersion = std::move(event.resourceVersion);
          return std::nullopt;
        }
        // A plain bookmark says where the server is, not that the initial events are over
        // (client-go's watch-list goes on past it too).
        if (event.type == WatchEventType::Bookmark) continue;
        if (event.type == WatchEventType::Error) return streamRefused(event.error);
        // Changes come only after the closing bookmark: a server that sends one before it did
        // not take the request as a watch-list.
        return refuseWatchList("a " + std::string(toString(event.type)) +
                               " event before the bookmark that ends the initial events");
      case WatchStream::Next::Closed:
        if (cancel_.cancelled()) return After::Stop;
        return streamFailed(
            {"watch", 0, "watch-list closed after " + std::to_string(events) + " events, before its closing bookmark"});
      case WatchStream::Next::Broken:
        if (cancel_.cancelled()) return After::Stop;
        if (watchdog.expired()) return silentStream(events);
        return streamFailed({"watch", 0, "watch-list stream broken: " + stream.problem()});
      case WatchStream::Next::Malformed:
        return streamFailed({"watch", 0, "malformed watch-list event: " + stream.problem()});
    }
  }
}

// The initial events stopped without their closing bookmark. A server that never sends it did not
// take the request as a watch-list; one that paused under load did: one sync by LIST, and only
// kSilentStreams silences in a row mean the server does not serve watch-lists.
Reflector::After Reflector::silentStream(std::size_t events) {
  const std::string why = "no bookmark ending the initial events within " + formatDuration(options_.watchListQuiet) +
                          " of the last event (" + std::to_string(events) + " events)";
  if (++silentStreams_ >= kSilentStreams) {
    silentStreams_ = 0;
    return refuseWatchList(why + ", " + std::to_string(kSilentStreams) + " watch-lists in a row");
  }
  log::warn("reflector watch-list fell silent before its closing bookmark, listing once instead",
            {{"resource", resource_.name}, {"reason", why}, {"in_a_row", silentStreams_}});
  listOnce_ = true;
  return After::List;
}

// The server answered the watch-list with an error (opening it, or in an ERROR event).
Reflector::After Reflector::streamRefused(const ApiError& error) {
  if (refusesParameters(error)) return refuseWatchList(error.describe());
  if (error.code == 401 || error.code == 403) {
    // The LIST answers for itself (a one-shot run needs only "list"); the watch that follows it
    // reports a refused "watch" to the cache's health.
    log::debug("reflector watch-list refused, listing instead",
               {{"resource", resource_.name}, {"error", error.describe()}});
    listOnce_ = true;
    return After::List;
  }
  if (error.isGone()) rvUnavailable_ = true;  // start over from the newest state
  return streamFailed({"watch", error.code, "watch-list: " + error.describe()});
}

Reflector::After Reflector::streamFailed(ReflectorFailure failure) {
  log::write(unlessRepeated("watch-list " + failure.message, log::Level::Warn), "reflector watch-list failed",
             {{"resource", resource_.name},
              {"requested_rv", rvUnavailable_ ? std::string() : lastResourceVersion()},
              {"error", failure.message}});
  reportError(std::move(failure));
  if (++streamFailures_ >= kStreamAttempts) {
    // Making progress beats streaming, as client-go says when it falls back: one paged LIST, and
    // a watch-list again at the next relist.
    log::info("reflector watch-list keeps failing, listing once instead",
              {{"resource", resource_.name}, {"attempts", streamFailures_}});
    streamFailures_ = 0;
    listOnce_ = true;
  }
  return After::Backoff;
}

Reflector::After Reflector::refuseWatchList(const std::string& why) {
  // The WatchList gate is server-wide: said once per process, at info (a supported setup).
  const bool first = client_.noteWatchListRefused();
  log::write(first ? log::Level::Info : log::Level::Debug,
             "the API server does not serve watch-lists; listing in pages from now on",
             {{"resource", resource_.name}, {"reason", why}});
  return After::List;
}

}  // namespace kdesched::kube
