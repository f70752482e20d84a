// Leader election with a coordination.k8s.io/v1 Lease, with client-go's semantics: a candidate
// takes over only after it has observed no change to the record for leaseDuration (local clock
// only, so clock skew between replicas does not matter); the leader renews every retryPeriod and
// gives up when it could not renew for renewDeadline. Each attempt is bounded by renewDeadline and
// cut short by cancellation, so a hung API server delays neither shutdown nor stepping down. There
// is no fencing: callers check isLeader() right before each eviction and exit when leadership is
// lost.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "pkg/evictor/live_conditions.h"
#include "pkg/kube/client.h"

namespace kdesched::kube {

struct LeaderElectionConfig {
  std::string ns = "kube-system";
  std::string name = "descheduler";
  std::string identity;  // default: <hostname>_<random>
  std::chrono::milliseconds leaseDuration{137000};
  std::chrono::milliseconds renewDeadline{107000};
  std::chrono::milliseconds retryPeriod{26000};
};

// LeaseDuration > RenewDeadline > 1.2 × RetryPeriod > 0, as client-go validates.
Status validateLeaderElection(const LeaderElectionConfig& c);
std::string defaultIdentity();

// Held, and renewed less than renewDeadline ago, counting from when the renewal that succeeded was
// started (a slow PUT must not stretch the margin: the Lease says renewTime = the attempt's start).
class LeaderElector : public evictor::Leadership {
 public:
  LeaderElector(Client& client, LeaderElectionConfig config, std::shared_ptr<Clock> clock);
  ~LeaderElector() override;

  // Blocks until this process holds the lease (true) or `cancel` fires (false).
  bool acquire(Cancellation& cancel);
  // Renews in the background; `onLost` runs once (on the renew thread) when leadership is lost.
  void startRenewing(std::function<void()> onLost);
  // Held, and renewed less than renewDeadline ago.
  bool isLeader() const override;
  // Stops renewing (cutting a renewal in flight) and, if still the leader, empties holderIdentity
  // so a successor need not wait a full leaseDuration. Bounded: at most min(renewDeadline, 5 s).
  void release();

  const std::string& identity() const { return config_.identity; }

 private:
  struct Record {
    std::string holder;
    int leaseDurationSeconds = 0;
    std::string acquireTime;
    std::string renewTime;
    int transitions = 0;
    std::string resourceVersion;
    // The Lease as the API server last gave it (JSON; "" before one was read): an update is made
    // from it, as client-go's, so labels, annotations, ownerReferences and spec fields kdesched
    // does not know (strategy, preferredHolder) survive every renewal.
    std::string object;
  };
  // One attempt, bounded by renewDeadline and cut short by `cancel`; true when we hold the lease
  // afterwards.
  bool tryAcquireOrRenew(Cancellation* cancel);
  // Decodes a Lease; an error names what is wrong with it.
  static Status parseRecord(const std::string& json, Record& out);
  // PUTs `r` with an empty holder (the release); on 409 re-reads the lease once and releases from
  // the version read, if it is still ours.
  ApiResult<HttpResponse> putRelease(Record r, const RequestOptions& opts);
  std::string leasePath() const;
  std::string leaseKey() const;  // namespace/name, for logs
  std::string body(const Record& r, bool withResourceVersion) const;

  Client& client_;
  LeaderElectionConfig config_;
  std::shared_ptr<Clock> clock_;
  mutable std::mutex mu_;
  Record observed_;
  Clock::TimePoint observedAt_{};
  bool held_ = false;
  Clock::TimePoint lastRenew_{};
  Cancellation stop_;
  std::thread renewer_;
};

}  // namespace kdesched::kube
