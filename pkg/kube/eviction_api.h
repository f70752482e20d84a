// The evictor's EvictionApi over the API client: POST pods/{name}/eviction (policy/v1), and
// events.k8s.io/v1 Events on the pod as upstream records them (so upstream's RBAC, which grants
// Events in that group only, is enough).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "pkg/evictor/eviction_api.h"
#include "pkg/kube/client.h"
#include "pkg/kube/rate_limiter.h"

namespace kdesched::kube {

// Upstream's reporting controller (events.NewEventBroadcasterAdapter(...).NewRecorder): kept, so
// `--field-selector reportingComponent=sigs.k8s.io.descheduler` finds kdesched's Events too. The
// instance tells them apart.
inline constexpr const char* kEventController = "sigs.k8s.io.descheduler";
inline constexpr const char* kEventInstance = "kdesched";
// events.k8s.io/v1 validation refuses a longer note.
inline constexpr std::size_t kEventNoteLimit = 1024;

class KubeEvictionApi : public evictor::EvictionApi {
 public:
  // `cancel` (may be null) aborts an eviction or Event request in flight, and any later one.
  // `clock` stamps and names the Events. Events wait on their own token bucket, sized like the
  // client's, never on the one evictions and relists share.
  KubeEvictionApi(Client& client, std::shared_ptr<Clock> clock, Cancellation* cancel = nullptr)
      : client_(client),
        clock_(std::move(clock)),
        cancel_(cancel),
        eventBudget_(client.qps(), client.burst(), clock_) {}
  evictor::ApiAnswer evict(const evictor::EvictionRequest& r) override;
  evictor::PodCheck checkPod(const std::string& ns, const std::string& name, const std::string& uid) override;
  void recordEvent(const evictor::PodEvent& e) override;
  evictor::ApiAnswer getApps(const std::string& resource, const std::string& ns, const std::string& name,
                             std::string& body) override;
  evictor::ApiAnswer restartDeployment(const evictor::RestartRequest& r) override;

 private:
  // Unix nanoseconds, strictly increasing within the process: the Event name's suffix, as
  // client-go's "<name>.<hex nanoseconds>", unique even when two Events share a clock tick.
  std::int64_t eventStamp(Clock::WallTime now);

  Client& client_;
  std::shared_ptr<Clock> clock_;
  Cancellation* cancel_;
  TokenBucket eventBudget_;
  std::atomic<std::int64_t> lastStamp_{0};
};

// `note` cut to the events.k8s.io limit, on a UTF-8 boundary (an Event the server refuses is lost).
std::string eventNote(const std::string& note);

}  // namespace kdesched::kube
