// The endpoint operators and kubelets talk to: /metrics (Prometheus text), /healthz (the process
// is alive) and /readyz (caches synced and leadership known). HTTPS as upstream's (a self-signed
// certificate unless --tls-cert-file/--tls-private-key-file are given); plain HTTP only when asked.
//
// Anything that can reach the port can talk to it, so nothing a client does may cost more than a
// bounded amount of memory or time: the request head is bounded in bytes and fields and must
// arrive within a deadline (a slowloris is closed), no body is accepted, a TLS handshake and an
// idle keep-alive connection have deadlines, and at most `maxConnections` are open. The server runs
// on its own thread and io_context: a flood of clients delays neither the API client, nor the
// watches, nor the lease renewals (those stay on cpprestsdk's pool). The deadlines are Asio's
// timers on that io_context, set from the durations given here, so tests shorten them.
#pragma once

#include <chrono>
#include <cstddef>
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

// The server's bounds; the defaults are the daemon's (docs/limits.md).
struct ServerLimits {
  // The request line and every header field together; larger gets 431 and the connection closed.
  std::size_t maxHeaderBytes = 16 * 1024;
  std::size_t maxHeaderFields = 64;
  // From the first byte of a request head (or the accepted connection) to its end: a client
  // dribbling a head (slowloris) is closed then.
  std::chrono::milliseconds headerTimeout{10'000};
  // A keep-alive connection waiting for its next request. Above the usual 60 s scrape interval, so
  // Prometheus reuses its connection rather than racing the close.
  std::chrono::milliseconds idleTimeout{90'000};
  std::chrono::milliseconds handshakeTimeout{10'000};
  // Writing one response (a client that stops reading).
  std::chrono::milliseconds writeTimeout{10'000};
  // Open connections. At the limit, a new connection takes the slot of the connection that has
  // waited longest without sending a whole request (handshake or head unfinished), else of the one
  // idle longest; only when every slot is answering a request is the new connection closed. So a
  // kubelet probe, which opens a connection each time, gets a slot however many clients hold
  // connections open and idle.
  int maxConnections = 64;
};

class Server {
 public:
  Server(Metrics* metrics, std::function<Readiness()> readiness, ServerLimits limits = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Starts listening on its own thread; a taken port, a bad address or an unusable certificate is
  // an error naming it. `clock` stamps a self-signed certificate and paces the re-reading of
  // certificate files.
  Status start(const std::string& bindAddress, int port, const TlsOptions& tls, std::shared_ptr<Clock> clock);
  // Stops listening, closes every connection (an idle keep-alive one too: Prometheus keeps one per
  // target, which must not hold the process past the kubelet's grace period) and ends the server's
  // thread. True when that took less than `limit`; false only when the thread was stuck in a
  // handler (a readiness or metrics callback that blocks): it is then left running, and the
  // process must end without exit handlers (std::_Exit), which would otherwise free what it uses.
  bool stop(std::chrono::milliseconds limit = kCloseLimit);

  static constexpr std::chrono::milliseconds kCloseLimit{2000};

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kdesched::metrics
