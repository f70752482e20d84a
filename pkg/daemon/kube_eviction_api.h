// The evictor's EvictionApi over the API client: POST pods/{name}/eviction (policy/v1) and core/v1
// Events on the pod.
#pragma once

#include "pkg/evictor/api_sink.h"
#include "pkg/kube/client.h"

namespace kdesched::daemon {

class KubeEvictionApi : public evictor::EvictionApi {
 public:
  // `cancel` (may be null) aborts an eviction or Event request in flight, and any later one.
  explicit KubeEvictionApi(kube::Client& client, Cancellation* cancel = nullptr) : client_(client), cancel_(cancel) {}
  evictor::ApiAnswer evict(const evictor::EvictionRequest& r) override;
  void recordEvent(const evictor::PodEvent& e) override;

 private:
  kube::Client& client_;
  Cancellation* cancel_;
};

}  // namespace kdesched::daemon
