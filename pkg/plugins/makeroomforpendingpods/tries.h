// The pending pods MakeRoomForPendingPods made room for, followed until each try has an outcome.
// A try is one run's evictions for one pending pod. The pod is not tried again while the try's
// backoff holds (the anti-flapping one: backoffInitial, doubling with each try of the same pod, up
// to backoffMax), so a pod that stays Pending does not cost a move every cycle. Each try ends with
// one outcome, reported once (log line, kdesched_pending_helped_total{result}, an Event on the pod):
//   scheduled            bound to the node room was made on
//   scheduled_elsewhere  bound to another node
//   gone                 deleted (or replaced) before it was bound
//   still_pending        still unbound when the backoff ran out (it may be tried again)
// Kept in memory, one entry per pod tried and not yet resolved: a restart forgets them, and the
// first run after one may try a pod again (documented in the plugin's docs).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "pkg/api/types.h"
#include "pkg/cluster/snapshot.h"
#include "pkg/framework/registry.h"

namespace kdesched::plugins::makeroomforpendingpods {

struct Backoff {
  double initialSeconds = 600;   // kdesched.antiFlapping.backoffInitial's default
  double maxSeconds = 6 * 3600;  // kdesched.antiFlapping.backoffMax's default
};

struct TryOutcome {
  std::string ns, name, uid;
  std::string result;        // scheduled | scheduled_elsewhere | gone | still_pending
  std::string node;          // the node room was made on
  std::string boundTo;       // where it was bound (scheduled*)
  double seconds = 0;        // from the try to the outcome (to when the run saw it)
  int tries = 0;             // this pod's tries so far
  std::string text() const;  // the Event's note
};
using OutcomeSink = std::function<void(const framework::PendingOutcome&)>;

class Tries {
 public:
  struct Settings {
    Backoff backoff;
    OutcomeSink sink;
  };
  Tries(Backoff backoff, OutcomeSink sink) : backoff_(backoff), sink_(std::move(sink)) {}

  // Ends the tries the snapshot settles (bound, gone, or still pending past the backoff).
  // O(pods) when any try is open, else nothing.
  void observe(const cluster::Snapshot& snapshot, api::Timestamp now);
  // Why `pod` is not tried now: the text of its skip, or nullopt when it may be tried.
  std::optional<std::string> holds(const api::Pod& pod, api::Timestamp now) const;
  // When `pod`'s open try's backoff runs out (nullopt: no open try).
  std::optional<api::Timestamp> heldUntil(const api::Pod& pod) const;
  void tried(const api::Pod& pod, const std::string& node, api::Timestamp now);
  std::size_t open() const;

 private:
  struct Try {
    std::string ns, name, node;
    api::Timestamp at = 0;
    int count = 0;     // this pod's tries, with this one
    bool open = true;  // no outcome yet
  };
  double backoffSeconds(int count) const;
  void end(Try& t, const std::string& uid, std::string result, std::string boundTo, api::Timestamp now);

  Backoff backoff_;
  OutcomeSink sink_;
  mutable std::mutex mu_;
  std::map<std::string, Try> tries_;  // by pod UID
};

}  // namespace kdesched::plugins::makeroomforpendingpods
