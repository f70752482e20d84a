// The reflector tests' fixture: a client over the scripted transport, a store, and an observer
// that records what the reflector reported.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pkg/kube/reflector.h"
#include "test/unit/kube/fakes.h"

namespace kdesched::kube::testing {

class RecordingObserver final : public ReflectorObserver {
 public:
  void onList(api::Kind, std::size_t objects, double) override {
    std::lock_guard<std::mutex> lock(mu_);
    lists.push_back(objects);
  }
  void onWatchRestart(api::Kind, const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    restarts.push_back(reason);
  }
  void onRelist(api::Kind, const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    relists.push_back(reason);
  }
  void onEvent(api::Kind, WatchEventType type) override {
    std::lock_guard<std::mutex> lock(mu_);
    events.push_back(std::string(toString(type)));
  }
  void onError(api::Kind, const ReflectorFailure& f) override {
    std::lock_guard<std::mutex> lock(mu_);
    errors.push_back(f.message);
    failures.push_back(f.verb + " " + std::to_string(f.code));
  }
  void onWatchOpened(api::Kind) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++opened;
  }
  int openedCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return opened;
  }
  void onUndecodable(api::Kind, std::size_t count, const std::string& first) override {
    std::lock_guard<std::mutex> lock(mu_);
    undecodable.push_back(std::to_string(count) + (first.empty() ? "" : " " + first));
  }

  std::vector<std::size_t> lists;
  std::vector<std::string> undecodable;  // "count first"
  std::vector<std::string> restarts, relists, events, errors;
  std::vector<std::string> failures;  // "verb code"
  int opened = 0;

 private:
  std::mutex mu_;
};

class ReflectorTest : public ::testing::Test {
 protected:
  ReflectorTest() {
    ClientConfig cfg;
    cfg.server = "https://api:6443";
    cfg.qps = -1;
    cfg.requestTimeout = {};  // its timer would sleep on the fake clock, whose sleeps return at once
    auto t = std::make_unique<FakeTransport>();
    transport_ = t.get();
    client_ = std::make_unique<Client>(cfg, std::move(t), clock_);
    subscription_ = store_.subscribe([this](const cluster::StoreEvent& e) {
      auto* c = std::get_if<cluster::Change<api::Pod>>(&e);
      if (!c) return;
      std::lock_guard<std::mutex> lock(mu_);
      if (c->type == cluster::EventType::Deleted) {
        deleted_.push_back(c->before->key());
        changes_.push_back("deleted " + c->before->key());
      } else {
        changes_.push_back((c->type == cluster::EventType::Added ? "added " : "modified ") + c->after->key());
      }
    });
  }

  // The paged LIST path (watch-list off), as before watch-lists.
  std::unique_ptr<Reflector> start(double random = 0.0, bool listOnly = false) {
    ReflectorOptions o = options(random);
    o.listOnly = listOnly;
    return startWith(o);
  }
  // Watch-list off and unbounded (its watchdog would sleep on the fake clock, whose sleeps return
  // at once): tests turn on what they test.
  ReflectorOptions options(double random = 0.0) {
    ReflectorOptions o;
    o.clock = clock_;
    o.random = [random] { return random; };
    o.watchList = false;
    o.watchListQuiet = std::chrono::seconds(0);
    o.silentWatch = std::chrono::seconds(0);
    return o;
  }
  std::unique_ptr<Reflector> startWith(const ReflectorOptions& o, const Resource& resource = kPods) {
    auto r = std::make_unique<Reflector>(*client_, resource, store_, o, &observer_);
    r->start();
    return r;
  }

  // Waits until the reflector opened its n-th watch (which, unscripted, hangs until stop()).
  void waitForWatches(std::size_t n) {
    ASSERT_TRUE(waitUntil([&] { return transport_->watched().size() >= n; }))
        << "watches opened: " << transport_->watched().size();
  }

  std::map<std::string, std::string> pods() {
    std::map<std::string, std::string> out;  // key → node
    for (const api::Pod* p : store_.snapshot()->pods()) out[p->key()] = p->nodeName.str();
    return out;
  }
  std::vector<std::string> deleted() {
    std::lock_guard<std::mutex> lock(mu_);
    return deleted_;
  }
  // Every change the store announced to its listeners, in order: "added default/a".
  std::vector<std::string> changes() {
    std::lock_guard<std::mutex> lock(mu_);
    return changes_;
  }
  std::vector<std::string> sentTargets() {
    std::vector<std::string> out;
    for (const auto& s : transport_->sent()) out.push_back(s.target);
    return out;
  }
  std::vector<std::string> watchRvs() {
    std::vector<std::string> out;
    for (const auto& w : transport_->watched()) {
      auto at = w.target.find("resourceVersion=");
      out.push_back(at == std::string::npos ? "" : w.target.substr(at + 16, w.target.find('&', at) - at - 16));
    }
    return out;
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  FakeTransport* transport_ = nullptr;
  std::unique_ptr<Client> client_;
  cluster::Store store_;
  RecordingObserver observer_;
  std::mutex mu_;
  std::vector<std::string> deleted_;
  std::vector<std::string> changes_;
  cluster::Store::Subscription subscription_;  // last: unsubscribes before the rest goes
};

inline Scripted failedWatch(int code, const std::string& reason, const std::string& message) {
  Scripted s;
  s.status = code;
  s.body = statusJson(code, reason, message);
  s.end = Scripted::End::Close;
  return s;
}

}  // namespace kdesched::kube::testing
