#include "pkg/daemon/prometheus_source.h"

#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>

#include "pkg/base/log.h"
#include "pkg/kube/cpprest_transport.h"
#include "pkg/kube/deadline.h"
#include "pkg/usage/decode.h"

namespace kdesched::daemon {
namespace {

// Upstream's data key (prom_client_controller.go).
constexpr const char* kTokenKey = "prometheusAuthToken";
// What an error quotes of an answer that is not Prometheus JSON.
constexpr std::size_t kQuotedBody = 200;

// The system's trust store as PEM, read from where OpenSSL was built to look. Read explicitly: the
// API client, given the cluster's CA, turns the process's default store off (cpprest_transport).
std::string systemTrustBundle() {
  const char* env = std::getenv(X509_get_default_cert_file_env());
  std::string path = env && std::string_view(env) != "/dev/null" ? env : X509_get_default_cert_file();
  auto pem = kube::readBoundedFile(path);
  if (!pem.isOk()) {
    log::warn("cannot read the system's CA bundle for Prometheus; HTTPS to it will fail",
              {{"path", path}, {"error", pem.error()}});
    return "";
  }
  return *pem;
}

// An error body on one log line: a proxy's HTML page by its <title>, whitespace runs as one space,
// at most kQuotedBody characters.
std::string quoteBody(const std::string& body) {
  std::string_view text = body;
  std::string lower(body.substr(0, 4096));
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (const std::size_t open = lower.find("<title>"); open != std::string::npos)
    if (const std::size_t close = lower.find("</title>", open); close != std::string::npos)
      text = text.substr(open + 7, close - open - 7);
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.size() <= kQuotedBody ? out : out.substr(0, kQuotedBody) + "...";
}

}  // namespace

std::string redactedPrometheusUrl(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const std::size_t authority = scheme + 3;
  const std::size_t end = std::min(url.find_first_of("/?#", authority), url.size());
  const std::size_t at = url.rfind('@', end == 0 ? 0 : end - 1);
  if (at == std::string::npos || at < authority) return url;
  const std::size_t colon = url.find(':', authority);
  if (colon == std::string::npos || colon > at) return url;  // a user without a password
  return url.substr(0, colon + 1) + "xxxxx" + url.substr(at);
}

Result<PrometheusUrl> splitPrometheusUrl(const std::string& url) {
  const std::string shown = redactedPrometheusUrl(url);
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos || (url.compare(0, scheme, "http") != 0 && url.compare(0, scheme, "https") != 0))
    return Status::error("prometheus url \"" + shown + "\": must start with http:// or https://");
  if (url.find_first_of("?#") != std::string::npos)
    return Status::error("prometheus url \"" + shown + "\": must not carry a query or a fragment");
  const std::size_t path = url.find('/', scheme + 3);
  PrometheusUrl out;
  out.server = url.substr(0, path);
  if (out.server.size() == scheme + 3) return Status::error("prometheus url \"" + shown + "\": no host");
  if (path != std::string::npos) out.pathPrefix = url.substr(path);
  while (!out.pathPrefix.empty() && out.pathPrefix.back() == '/') out.pathPrefix.pop_back();
  return out;
}

SecretTokenSource::SecretTokenSource(kube::Client& client, policy::SecretReference secret)
    : client_(client), secret_(std::move(secret)) {}

Result<std::string> SecretTokenSource::token() {
  const std::string which = secret_.ns + "/" + secret_.name;
  auto r = client_.get("/api/v1/namespaces/" + kube::encodeQueryValue(secret_.ns) + "/secrets/" +
                       kube::encodeQueryValue(secret_.name));
  if (!r.isOk()) {
    std::string why = "unable to get " + which + " secret: " + r.error().describe();
    if (r.error().code == 403) why += " (kdesched's ServiceAccount needs get on this Secret, in its namespace)";
    return Status::error(why);
  }
  std::string token;
  try {
    const nlohmann::json secret = nlohmann::json::parse(r->body);
    const auto data = secret.find("data");
    if (data != secret.end() && data->is_object()) {
      const auto value = data->find(kTokenKey);
      if (value != data->end() && value->is_string()) {
        auto decoded = kube::decodeBase64(value->get<std::string>());
        if (!decoded.isOk())
          return Status::error("secret " + which + ": data." + kTokenKey + ": not base64: " + decoded.error());
        token = std::move(*decoded);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::error("secret " + which + ": not a Secret: " + e.what());
  }
  if (token.empty())
    return Status::error("prometheus authentication token secret missing \"" + std::string(kTokenKey) +
                         "\" data or empty (secret " + which + ")");
  const std::size_t hash = std::hash<std::string>{}(token);
  if (hash != lastHash_) {
    log::info(lastHash_ == 0 ? "Prometheus token read from its Secret" : "Prometheus token in its Secret changed",
              {{"secret", which}});
    lastHash_ = hash;
  }
  return token;
}

PrometheusSource::PrometheusSource(PrometheusUrl url, std::unique_ptr<kube::Transport> transport,
                                   std::unique_ptr<kube::TokenSource> token, std::shared_ptr<Clock> clock,
                                   Clock::Duration timeout, SourceHealth& health, std::string withheld)
    : url_(std::move(url)),
      transport_(std::move(transport)),
      token_(std::move(token)),
      clock_(std::move(clock)),
      timeout_(timeout),
      health_(health),
      withheld_(std::move(withheld)) {}

usage::SourceReadings PrometheusSource::query(const std::string& query, api::Timestamp at, Cancellation* cancel) {
  usage::SourceReadings out;
  out.source = usage::Source::Prometheus;
  out.origin = "Prometheus";
  std::optional<std::string> why = ask(query, at, cancel, out);
  if (why) {
    out.nodes.clear();
    out.down = *why;
  }
  if (!(cancel && cancel->cancelled())) health_.report("query " + query, why);
  return out;
}

std::optional<std::string> PrometheusSource::ask(const std::string& query, api::Timestamp at, Cancellation* cancel,
                                                 usage::SourceReadings& out) {
  kube::HttpRequest request;
  request.method = "GET";
  request.target =
      url_.pathPrefix + "/api/v1/query?query=" + kube::encodeQueryValue(query) + "&time=" + std::to_string(at);
  request.headers.emplace_back("Accept", "application/json");
  if (token_) {
    auto token = token_->token();
    if (!token.isOk()) return "no token for Prometheus: " + token.error();
    if (!token->empty()) request.headers.emplace_back("Authorization", "Bearer " + *token);
  }
  // The transport's own timer measures silence only; the deadline counts the whole query.
  kube::RequestDeadline deadline(cancel, timeout_, clock_);
  request.cancel = deadline.get();
  request.timeout = std::chrono::ceil<std::chrono::seconds>(timeout_) + std::chrono::seconds(5);
  auto answer = transport_->send(request);
  if (!answer.isOk())
    return deadline.explain("Prometheus at " + url_.server + url_.pathPrefix + " did not answer: " + answer.error());
  // Prometheus answers errors (400 bad_data, 422 execution, 503 timeout) with its JSON envelope,
  // whose message says more than the HTTP status.
  const std::string& body = answer->body;
  const bool success = answer->status >= 200 && answer->status < 300;
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  const bool refused = answer->status == 401 || answer->status == 403;
  if (success || (first != std::string::npos && body[first] == '{')) {
    if (Status st = usage::decodePrometheusAnswer(body, out); !st.isOk())
      return refused && !withheld_.empty() ? st.message() + " (" + withheld_ + ")" : st.message();
    if (success) return std::nullopt;
  }
  std::string why = "Prometheus answered HTTP " + std::to_string(answer->status) + " " + answer->reason;
  if (refused) why += withheld_.empty() ? " (check the token it is given)" : " (" + withheld_ + ")";
  if (!body.empty()) why += ": " + quoteBody(body);
  return why;
}

PrometheusAccess prometheusAccess(const policy::PrometheusProvider& provider, const PrometheusUrl& url,
                                  kube::Client& client, std::shared_ptr<Clock> clock,
                                  const PrometheusEnvironment& env) {
  PrometheusAccess out;
  if (url.server.rfind("https://", 0) != 0) {
    out.ca = "none (http)";
  } else if (env.inCluster) {
    out.caData = env.inCluster->caData;
    out.ca = "the cluster's";
  } else {
    out.caData = systemTrustBundle();
    out.ca = "the system's";
  }
  if (provider.authTokenSecret) {
    out.token = std::make_unique<SecretTokenSource>(client, *provider.authTokenSecret);
    out.auth = "Secret " + provider.authTokenSecret->ns + "/" + provider.authTokenSecret->name;
  } else if (env.inCluster && !env.inCluster->tokenFile.empty() && url.server.rfind("https://", 0) != 0 &&
             !env.plainHttpToken) {
    // Upstream sends it over http too; the token may evict any pod in the cluster, and plain http
    // shows it to everything on the path and to proxies' logs. Prometheus without auth (the usual
    // in-cluster http install) answers all the same.
    out.auth = "none";
    out.withheld =
        "kdesched does not send the service account token to a plain http:// Prometheus: use an "
        "https:// URL, an authToken Secret, or --prometheus-plain-http-token to send it anyway";
  } else if (env.inCluster && !env.inCluster->tokenFile.empty()) {
    // Period zero: read for every query, as upstream reads the in-cluster config every cycle.
    out.token = std::make_unique<kube::CachedFileTokenSource>(env.inCluster->tokenFile, std::move(clock),
                                                              Clock::Duration::zero());
    out.auth = "service account token";
  } else {
    out.auth = "none";
  }
  return out;
}

Result<std::unique_ptr<PrometheusSource>> makePrometheusSource(const policy::PrometheusProvider& provider,
                                                               kube::Client& client, std::shared_ptr<Clock> clock,
                                                               const PrometheusEnvironment& env, SourceHealth& health) {
  auto url = splitPrometheusUrl(provider.url);
  if (!url.isOk()) return Status::error("metricsProviders: " + url.error());
  PrometheusAccess access = prometheusAccess(provider, *url, client, clock, env);
  kube::ClientConfig tls;
  tls.server = url->server;
  tls.caData = access.caData;
  // No proxy-url here: the environment's proxy, as upstream's Prometheus client takes it
  // (http.ProxyFromEnvironment in its transport).
  const kube::ProxyEnvironment proxyEnv = kube::ProxyEnvironment::fromProcess();
  auto transport = kube::makeCpprestTransport(tls, proxyEnv);
  const std::string shown = redactedPrometheusUrl(provider.url);
  if (!transport.isOk()) return Status::error("Prometheus at " + shown + ": " + transport.error());
  auto proxy = kube::chooseProxy(tls.server, "", proxyEnv);
  const std::string proxyShown = proxy.isOk() ? proxy->describe() : proxy.error();
  if (access.withheld.empty())
    log::info("Prometheus usage source",
              {{"url", shown}, {"auth", access.auth}, {"ca", access.ca}, {"proxy", proxyShown}});
  else
    log::warn(
        "Prometheus usage source",
        {{"url", shown}, {"auth", access.auth}, {"ca", access.ca}, {"proxy", proxyShown}, {"token", access.withheld}});
  return std::make_unique<PrometheusSource>(std::move(*url), std::move(transport.value()), std::move(access.token),
                                            std::move(clock), env.timeout, health, access.withheld);
}

}  // namespace kdesched::daemon
