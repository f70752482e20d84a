// Usage from Prometheus for the live modes: per cycle, one instant query per distinct query text
// (`GET <url>/api/v1/query?query=...&time=<the cycle's start>`), decoded with upstream's checks.
//
// Authentication, as upstream: the token in the Secret `authToken.secretReference` names (data key
// prometheusAuthToken), read again for every query so a changed Secret is used by the next cycle
// (upstream watches the Secret and rebuilds its client); without one, in a cluster, the pod's
// service-account token, re-read for every query so a rotated token is picked up. TLS: in a cluster
// the cluster's CA, as upstream (which trusts only that CA); outside one (upstream cannot query
// Prometheus there at all) the system's trust store, and no token unless a Secret names one.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "pkg/base/clock.h"
#include "pkg/daemon/source_health.h"
#include "pkg/kube/client.h"
#include "pkg/kube/config.h"
#include "pkg/kube/token_source.h"
#include "pkg/kube/transport.h"
#include "pkg/policy/policy.h"
#include "pkg/usage/usage.h"

namespace kdesched::daemon {

// `metricsProviders[].prometheus.url` split for the transport: the server ("https://host:port")
// and the path the API sits under ("" or "/prometheus").
struct PrometheusUrl {
  std::string server;
  std::string pathPrefix;
};
Result<PrometheusUrl> splitPrometheusUrl(const std::string& url);
// The url for logs and messages: a password in its userinfo masked as Go's URL.Redacted masks it
// ("https://user:xxxxx@host/"). Only the in-cluster token or the Secret's authenticates.
std::string redactedPrometheusUrl(const std::string& url);

// The token of a Secret (its prometheusAuthToken), read with one GET each time it is asked for.
class SecretTokenSource final : public kube::TokenSource {
 public:
  SecretTokenSource(kube::Client& client, policy::SecretReference secret);
  Result<std::string> token() override;
  void reset() override {}

 private:
  kube::Client& client_;
  const policy::SecretReference secret_;
  std::size_t lastHash_ = 0;  // of the token last read, to log a change (never the token)
};

class PrometheusSource {
 public:
  // `token` null: no Authorization header. `timeout` bounds each query from sending it to the last
  // byte of the answer.
  // `withheld`: why a token upstream would send is not (said again when Prometheus answers 401/403).
  PrometheusSource(PrometheusUrl url, std::unique_ptr<kube::Transport> transport,
                   std::unique_ptr<kube::TokenSource> token, std::shared_ptr<Clock> clock, Clock::Duration timeout,
                   SourceHealth& health, std::string withheld = "");

  // The answer to `query` evaluated at `at` (Unix seconds). The reading is `down`, with why, when
  // no usable answer came: unreachable, an error answer, a result that is not a vector, a value
  // outside [0, 1].
  usage::SourceReadings query(const std::string& query, api::Timestamp at, Cancellation* cancel = nullptr);

 private:
  std::optional<std::string> ask(const std::string& query, api::Timestamp at, Cancellation* cancel,
                                 usage::SourceReadings& out);

  const PrometheusUrl url_;
  std::unique_ptr<kube::Transport> transport_;
  std::unique_ptr<kube::TokenSource> token_;
  std::shared_ptr<Clock> clock_;
  const Clock::Duration timeout_;
  SourceHealth& health_;
  const std::string withheld_;
};

// Where kdesched runs, for the choice of token and CA: the in-cluster config when in a pod.
struct PrometheusEnvironment {
  std::optional<kube::ClientConfig> inCluster;
  Clock::Duration timeout = std::chrono::seconds(30);
  // --prometheus-plain-http-token: send the service account token to an http:// URL too (upstream
  // does; the token may evict any pod, and plain http shows it to the path and proxies' logs).
  bool plainHttpToken = false;
};

// How kdesched reaches the provider: the token source (null: no Authorization header) and the CA
// the transport trusts ("" for http), with words for the start-up log line.
struct PrometheusAccess {
  std::unique_ptr<kube::TokenSource> token;
  std::string caData;
  std::string auth;  // "Secret ns/name", "service account token", "none"
  std::string ca;    // "the cluster's", "the system's", "none (http)"
  // Why no token is sent although upstream would send one ("": it is, or none would be).
  std::string withheld;
};
PrometheusAccess prometheusAccess(const policy::PrometheusProvider& provider, const PrometheusUrl& url,
                                  kube::Client& client, std::shared_ptr<Clock> clock, const PrometheusEnvironment& env);

// The source for the policy's Prometheus provider, or an error naming the field (exit 2).
Result<std::unique_ptr<PrometheusSource>> makePrometheusSource(const policy::PrometheusProvider& provider,
                                                               kube::Client& client, std::shared_ptr<Clock> clock,
                                                               const PrometheusEnvironment& env, SourceHealth& health);

}  // namespace kdesched::daemon
