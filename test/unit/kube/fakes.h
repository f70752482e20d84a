// Test doubles for pkg/kube: the fake clock (test/unit/testing/fake_clock.h), and a
// transport that serves scripted responses in order and records every request.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pkg/base/clock.h"
#include "pkg/base/log.h"
#include "pkg/kube/transport.h"
#include "test/unit/testing/eventually.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::kube::testing {

using namespace std::chrono_literals;

using FakeClock = kdesched::testing::FakeClock;

// One scripted answer. For send(): status/headers/body, or a transport failure. For openWatch():
// status/headers, then `lines`, then `end`.
struct Scripted {
  enum class End { Close, Break, Hang };
  int status = 200;
  Headers headers;
  std::string body;
  std::optional<std::string> transportError;
  std::vector<std::string> lines;
  End end = End::Hang;
  bool answers = true;              // false: no response at all (not even headers) until the request is cancelled
  std::function<void()> whileSent;  // runs while the request is with the server (e.g. moves a fake clock)

  static Scripted json(std::string body, int status = 200) {
    Scripted s;
    s.status = status;
    s.body = std::move(body);
    return s;
  }
  static Scripted failure(std::string message) {
    Scripted s;
    s.transportError = std::move(message);
    return s;
  }
  // A server that accepted the connection and never answers (paused, or a stalled proxy).
  static Scripted silence() {
    Scripted s;
    s.answers = false;
    return s;
  }
  static Scripted watch(std::vector<std::string> lines, End end) {
    Scripted s;
    s.lines = std::move(lines);
    s.end = end;
    return s;
  }
};

// A line stream that ends as scripted; Hang blocks until cancelled (by cancel() or the request's
// Cancellation), which is where a reflector rests at the end of a test, or until the test feeds it
// more lines (FakeTransport::feed).
class FakeLineStream final : public LineStream {
 public:
  // Shared with the transport, so a test can feed an open stream and see what it has read.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::string> lines;
    Scripted::End end = Scripted::End::Close;
    bool cancelled = false;
    bool closed = false;  // the client let go of the stream (destroyed it)
    int waiting = 0;      // readers blocked for more lines
    void cancel() {
      {
        std::lock_guard<std::mutex> lock(mu);
        cancelled = true;
      }
      cv.notify_all();
    }
    void push(std::vector<std::string> more) {
      {
        std::lock_guard<std::mutex> lock(mu);
        lines.insert(lines.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
      }
      cv.notify_all();
    }
    // Every line was read and, on a stream that hangs, the reader is back waiting for more: what
    // it did with the last line (a watchdog's progress, say) is done.
    bool drained() {
      std::lock_guard<std::mutex> lock(mu);
      return lines.empty() && (end != Scripted::End::Hang || waiting > 0 || cancelled);
    }
  };

  FakeLineStream(std::shared_ptr<State> state, Cancellation* requestCancel)
      : state_(std::move(state)), sub_(requestCancel, [s = state_] { s->cancel(); }) {}
  FakeLineStream(std::vector<std::string> lines, Scripted::End end, Cancellation* requestCancel)
      : FakeLineStream(makeState(std::move(lines), end), requestCancel) {}
  ~FakeLineStream() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->closed = true;
  }
  FakeLineStream(const FakeLineStream&) = delete;
  FakeLineStream& operator=(const FakeLineStream&) = delete;
  static std::shared_ptr<State> makeState(std::vector<std::string> lines, Scripted::End end) {
    auto s = std::make_shared<State>();
    s->lines.assign(lines.begin(), lines.end());
    s->end = end;
    return s;
  }
  bool next(std::string& line) override {
    std::unique_lock<std::mutex> lock(state_->mu);
    for (;;) {
      if (!state_->lines.empty() && !state_->cancelled) {
        line = std::move(state_->lines.front());
        state_->lines.pop_front();
        return true;
      }
      if (state_->end != Scripted::End::Hang || state_->cancelled) break;
      ++state_->waiting;
      state_->cv.wait(lock, [&] { return state_->cancelled || !state_->lines.empty(); });
      --state_->waiting;
    }
    setEndStatus();
    return false;
  }
  // The scripted lines as one byte stream (a protobuf watch's frames may span them).
  bool read(std::size_t n, std::string& out) override {
    out.clear();
    std::unique_lock<std::mutex> lock(state_->mu);
    for (;;) {
      while (out.size() < n && !state_->lines.empty() && !state_->cancelled) {
        std::string& front = state_->lines.front();
        const std::size_t take = std::min(n - out.size(), front.size());
        out.append(front, 0, take);
        if (take == front.size()) {
          state_->lines.pop_front();
        } else {
          front.erase(0, take);
        }
      }
      if (out.size() == n) return true;
      if (state_->end != Scripted::End::Hang || state_->cancelled) break;
      ++state_->waiting;
      state_->cv.wait(lock, [&] { return state_->cancelled || !state_->lines.empty(); });
      --state_->waiting;
    }
    setEndStatus();
    return false;
  }
  void cancel() override { state_->cancel(); }
  Status status() const override { return status_; }

 private:
  void setEndStatus() {
    switch (state_->end) {
      case Scripted::End::Close: status_ = state_->cancelled ? Status::error("cancelled") : Status::ok(); break;
      case Scripted::End::Break: status_ = Status::error("connection reset by peer"); break;
      case Scripted::End::Hang: status_ = Status::error("cancelled"); break;
    }
  }

  std::shared_ptr<State> state_;
  CancelSubscription sub_;
  Status status_;
};

class FakeTransport final : public Transport {
 public:
  struct Seen {
    std::string method;
    std::string target;
    Headers headers;
    std::string body;
    std::chrono::seconds timeout;
  };

  void onSend(Scripted s) {
    std::lock_guard<std::mutex> lock(mu_);
    sends_.push_back(std::move(s));
  }
  void onWatch(Scripted s) {
    std::lock_guard<std::mutex> lock(mu_);
    watches_.push_back(std::move(s));
  }
  std::vector<Seen> sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }
  std::vector<Seen> watched() {
    std::lock_guard<std::mutex> lock(mu_);
    return watched_;
  }
  // Appends lines to the n-th watch opened (0-based), which must have answered with a stream.
  void feed(std::size_t n, std::vector<std::string> lines) { stream(n)->push(std::move(lines)); }
  // The n-th watch's lines were all read (see State::drained); false while it is not opened yet (openWatch records the
  // request before it registers the stream, and a test polling between the two must not throw).
  bool drained(std::size_t n) {
    std::shared_ptr<FakeLineStream::State> state;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = streams_.find(n);
      if (it == streams_.end()) return false;
      state = it->second;
    }
    return state->drained();
  }
  // The client let go of the n-th watch's stream.
  bool closed(std::size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!streams_.count(n)) return false;  // not opened yet
    }
    auto s = stream(n);
    std::lock_guard<std::mutex> lock(s->mu);
    return s->closed;
  }

  Result<HttpResponse> send(const HttpRequest& request) override {
    std::optional<Scripted> s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sent_.push_back(record(request));
      if (!sends_.empty()) {
        s = std::move(sends_.front());
        sends_.pop_front();
      }
    }
    // Unscripted: wait like a slow server until the caller gives up.
    if (!s) s = Scripted::silence();
    if (s->whileSent) s->whileSent();
    if (!s->answers) return silent(request);
    if (s->transportError) return Status::error(*s->transportError);
    HttpResponse r;
    r.status = s->status;
    r.reason = reasonFor(s->status);
    r.headers = s->headers;
    r.body = s->body;
    return r;
  }

  Result<StreamResponse> openWatch(const HttpRequest& request) override {
    std::optional<Scripted> s;
    std::size_t index = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      index = watched_.size();
      watched_.push_back(record(request));
      if (!watches_.empty()) {
        s = std::move(watches_.front());
        watches_.pop_front();
      }
    }
    if (!s) s = Scripted::watch({}, Scripted::End::Hang);
    if (!s->answers) return silent(request);
    if (s->transportError) return Status::error(*s->transportError);
    StreamResponse r;
    r.status = s->status;
    r.reason = reasonFor(s->status);
    r.headers = s->headers;
    std::vector<std::string> lines = s->lines;
    if (!s->body.empty()) lines.push_back(s->body);
    auto state = FakeLineStream::makeState(std::move(lines), s->end);
    {
      std::lock_guard<std::mutex> lock(mu_);
      streams_[index] = state;
    }
    r.lines = std::make_unique<FakeLineStream>(std::move(state), request.cancel);
    return r;
  }

 private:
  // Blocks until the request is cancelled (by its caller or its deadline), then fails as a cut
  // connection does.
  static Status silent(const HttpRequest& request) {
    if (!request.cancel) return Status::error("unscripted request " + request.target + " without a cancellation");
    while (!request.cancel->waitFor(std::chrono::hours(1))) {
    }
    return Status::error("cancelled");
  }
  static Seen record(const HttpRequest& r) { return Seen{r.method, r.target, r.headers, r.body, r.timeout}; }
  static std::string reasonFor(int status) {
    switch (status) {
      case 200: return "OK";
      case 401: return "Unauthorized";
      case 404: return "Not Found";
      case 410: return "Gone";
      case 429: return "Too Many Requests";
      case 500: return "Internal Server Error";
      default: return "";
    }
  }

  std::shared_ptr<FakeLineStream::State> stream(std::size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find(n);
    if (it == streams_.end()) throw std::logic_error("watch " + std::to_string(n) + " has no stream");
    return it->second;
  }

  std::mutex mu_;
  std::map<std::size_t, std::shared_ptr<FakeLineStream::State>> streams_;  // by watch index
  std::deque<Scripted> sends_;
  std::deque<Scripted> watches_;
  std::vector<Seen> sent_;
  std::vector<Seen> watched_;
};

// Polls `cond` until it holds; `timeout` only guards against a hang.
inline bool waitUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout = 30000ms) {
  return kdesched::testing::eventually(cond, timeout);
}

// Runs `f` on another thread and says whether it returned within `guard`: for calls that must
// return promptly (cut a hung request) rather than wait out a timeout of minutes.
inline bool returns(std::function<void()> f, std::chrono::seconds guard = std::chrono::seconds(30)) {
  auto done = std::async(std::launch::async, std::move(f));
  return done.wait_for(guard) == std::future_status::ready;
}

// JSON for a pod as the API server sends it (the fields the decoder needs).
inline std::string podJson(const std::string& name, const std::string& rv, const std::string& node = "n1",
                           const std::string& ns = "default") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns + R"(","uid":"uid-)" + name +
         R"(","resourceVersion":")" + rv + R"("},"spec":{"nodeName":")" + node +
         R"(","containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]},"status":{"phase":"Running"}})";
}

inline std::string event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}";
}

inline std::string bookmark(const std::string& rv) {
  return event("BOOKMARK", R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + R"("}})");
}

// The bookmark that ends a watch-list's initial events, as kube-apiserver 1.36 writes it.
inline std::string initialEventsEnd(const std::string& rv) {
  return event("BOOKMARK", R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
                               R"(","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}},)" +
                               R"("spec":{"containers":null},"status":{}})");
}

inline std::string statusJson(int code, const std::string& reason, const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" + message +
         R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

inline std::string podList(const std::vector<std::string>& items, const std::string& rv,
                           const std::string& continueToken = "") {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + "\"";
  if (!continueToken.empty()) out += R"(,"continue":")" + continueToken + "\"";
  out += R"(},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}";
}

// Every log line written while it lives, at `level` and above (Trace: what -v 10 prints).
class LogCapture {
 public:
  explicit LogCapture(log::Level level = log::Level::Info) {
    log::setLevel(level);
    log::setWriter([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogCapture() {
    log::setWriter(nullptr);
    log::setLevel(log::Level::Info);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace kdesched::kube::testing
