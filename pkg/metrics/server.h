// The HTTP endpoint operators and kubelets talk to: /metrics (Prometheus text), /healthz (the
// process is alive) and /readyz (caches synced and leadership known). Plain HTTP; upstream serves
// HTTPS with a self-signed certificate on the same port (10258).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pkg/base/status.h"
#include "pkg/metrics/metrics.h"

namespace kdesched::metrics {

struct Readiness {
  bool ready = false;
  std::string reason;  // why not, or a short state when ready ("leader", "standby")
};

class Server {
 public:
  Server(Metrics* metrics, std::function<Readiness()> readiness);
  ~Server();
  // Starts listening; a taken port or a bad address is an error naming both.
  Status start(const std::string& bindAddress, int port);
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kdesched::metrics
