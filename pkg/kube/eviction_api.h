// The evictor's EvictionApi over the API client: POST pods/{name}/eviction (policy/v1) and core/v1
// Events on the pod.
#pragma once

#include <memory>
#include <string>

#include "pkg/evictor/eviction_api.h"
#include "pkg/kube/client.h"

namespace kdesched::kube {

class KubeEvictionApi : public evictor::EvictionApi {
 public:
  // `cancel` (may be null) aborts an eviction or Event request in flight, and any later one.
  // `clock` stamps the Events.
  KubeEvictionApi(Client& client, std::shared_ptr<Clock> clock, Cancellation* cancel = nullptr)
      : client_(client), clock_(std::move(clock)), cancel_(cancel) {}
  evictor::ApiAnswer evict(const evictor::EvictionRequest& r) override;
  void recordEvent(const evictor::PodEvent& e) override;

 private:
  Client& client_;
  std::shared_ptr<Clock> clock_;
  Cancellation* cancel_;
};

}  // namespace kdesched::kube
