// The endpoint operators and kubelets talk to: /metrics (Prometheus text), /healthz (the process
// is alive) and /readyz (caches synced and leadership known). HTTPS as upstream's (a self-signed
// certificate unless --tls-cert-file/--tls-private-key-file are given); plain HTTP only when asked.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "pkg/base/status.h"
#include "pkg/metrics/metrics.h"
#include "pkg/metrics/tls.h"

namespace kdesched::metrics {

struct Readiness {
  bool ready = false;
  std::string reason;  // why not, or a short state when ready ("leader", "standby")
};

class Server {
 public:
  Server(Metrics* metrics, std::function<Readiness()> readiness);
  ~Server();
  // Starts listening; a taken port, a bad address or an unusable certificate is an error naming it.
  // `clock` stamps a self-signed certificate and paces the re-reading of certificate files.
  Status start(const std::string& bindAddress, int port, const TlsOptions& tls, std::shared_ptr<Clock> clock);
  // Stops listening and closes the connections, waiting at most `limit` for them: a scraper's idle
  // keep-alive connection (Prometheus keeps one per target) would otherwise hold the process past
  // the kubelet's grace period, to a SIGKILL. False when connections were still open then: the
  // close still occupies cpprestsdk's pool thread, which the library's exit handler joins, so the
  // process must end without exit handlers (std::_Exit) or it hangs at exit instead.
  bool stop(std::chrono::milliseconds limit = kCloseLimit);

  static constexpr std::chrono::milliseconds kCloseLimit{2000};

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kdesched::metrics
