#include "pkg/policy/detail/metrics_sources.h"

#include <cctype>
#include <map>

#include "pkg/policy/detail/yaml_value.h"

namespace kdesched::policy {
namespace detail {
namespace {

constexpr std::string_view kKubernetesMetrics = "KubernetesMetrics";
constexpr std::string_view kPrometheus = "Prometheus";

bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// What Go's url.Parse refuses, in its words (upstream validates the URL with it and nothing else;
// "localhost:9090" parses there, as a scheme and an opaque part, and so it does here).
std::optional<std::string> urlParseError(std::string_view url) {
  for (char c : url)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "net/url: invalid control character in URL";
  if (!url.empty() && url[0] == ':') return "missing protocol scheme";
  for (std::size_t i = 0; i < url.size(); ++i) {
    if (url[i] != '%') continue;
    if (i + 2 >= url.size() || !isHex(url[i + 1]) || !isHex(url[i + 2])) {
      std::string_view bad = url.substr(i, 3);
      return "invalid URL escape \"" + std::string(bad) + "\"";
    }
  }
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  std::string_view authority = url.substr(scheme + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (std::size_t at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "missing ']' in host";
    port = authority.substr(close + 1);
    if (!port.empty() && port[0] != ':') return "invalid port \"" + std::string(port) + "\" after host";
  } else if (std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    port = authority.substr(colon);
  }
  for (std::size_t i = 1; i < port.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(port[i])))
      return "invalid port \"" + std::string(port) + "\" after host";
  return std::nullopt;
}

Status readSecretReference(ArgsReader& a, std::optional<SecretReference>& out, bool& present) {
  return a.readObject(
      "secretReference",
      [&](ArgsReader& s) -> Status {
        std::optional<std::string> ns, name;
        KD_TRY(s.readString("namespace", ns));
        KD_TRY(s.readString("name", name));
        out = SecretReference{ns.value_or(""), name.value_or("")};
        return Status::ok();
      },
      &present);
}

Status readPrometheus(ArgsReader& p, PrometheusProvider& out, const std::function<Status(ArgsReader&)>& lenient) {
  std::optional<std::string> url;
  KD_TRY(p.readString("url", url));
  out.url = url.value_or("");
  if (out.url.empty()) return p.error("url", "prometheus URL is required when prometheus is enabled");
  if (auto why = urlParseError(out.url))
    return p.error("url", "error parsing prometheus URL: parse " + quote(out.url, 200) + ": " + *why);
  bool authTokenSet = false;
  bool secretSet = false;
  KD_TRY(p.readObject(
      "authToken",
      [&](ArgsReader& a) -> Status {
        KD_TRY(readSecretReference(a, out.authTokenSecret, secretSet));
        return lenient(a);
      },
      &authTokenSet));
  if (authTokenSet && !secretSet)
    return p.error("authToken", "prometheus authToken secret is expected to be set when authToken field is");
  if (secretSet && (out.authTokenSecret->ns.empty() || out.authTokenSecret->name.empty()))
    return ArgsReader(RawArgs{.path = p.pathOf("authToken")})
        .error("secretReference", "prometheus authToken secret reference does not set both namespace and name");
  return lenient(p);
}

Status readProvider(ArgsReader& r, DeschedulerPolicy& policy, std::map<std::string, std::string>& seen,
                    const std::function<Status(ArgsReader&)>& lenient) {
  MetricsProvider provider;
  provider.path = r.path();
  std::optional<std::string> source;
  KD_TRY(r.readString("source", source));
  provider.source = source.value_or("");
  if (auto [first, fresh] = seen.try_emplace(provider.source, provider.path); !fresh)
    return r.error("source", "metric provider " + quote(provider.source) +
                                 " is already configured, each source can be configured only once (also at " +
                                 first->second + ")");
  // Upstream validates the prometheus block of the Prometheus provider only.
  if (provider.source == kPrometheus) {
    bool prometheusSet = false;
    KD_TRY(r.readObject(
        "prometheus", [&](ArgsReader& p) { return readPrometheus(p, provider.prometheus.emplace(), lenient); },
        &prometheusSet));
    if (!prometheusSet)
      return r.error("prometheus", "prometheus configuration is required when prometheus source is enabled");
  } else {
    RawArgs ignored;
    KD_TRY(r.readRaw("prometheus", ignored));
    if (provider.source != kKubernetesMetrics)
      policy.warnings.push_back(r.pathOf("source") + ": " + quote(provider.source) +
                                " is not a metrics source (KubernetesMetrics, Prometheus); accepted and unused, as "
                                "upstream accepts it");
    else if (ignored.isSet())
      policy.warnings.push_back(r.pathOf("prometheus") +
                                ": ignored for source KubernetesMetrics, as upstream ignores it");
  }
  KD_TRY(lenient(r));
  policy.metricsProviders.push_back(std::move(provider));
  return Status::ok();
}

}  // namespace

Status readMetricsSources(ArgsReader& top, DeschedulerPolicy& policy,
                          const std::function<Status(ArgsReader&)>& lenient) {
  KD_TRY(top.readObject("metricsCollector", [&](ArgsReader& m) -> Status {
    KD_TRY(m.readBool("enabled", policy.metricsCollectorEnabled));
    return lenient(m);
  }));
  std::map<std::string, std::string> seen;
  KD_TRY(top.readObjectList("metricsProviders",
                            [&](ArgsReader& r, std::size_t) { return readProvider(r, policy, seen, lenient); }));
  if (policy.metricsCollectorEnabled.value_or(false)) {
    for (const MetricsProvider& p : policy.metricsProviders)
      if (p.source == kKubernetesMetrics)
        return ArgsReader(RawArgs{.path = p.path})
            .error("source", "it is not allowed to combine metrics provider when metrics collector is enabled");
  }
  return Status::ok();
}

}  // namespace detail

bool DeschedulerPolicy::kubernetesMetricsConfigured() const {
  if (metricsCollectorEnabled.value_or(false)) return true;
  for (const MetricsProvider& p : metricsProviders)
    if (p.source == detail::kKubernetesMetrics) return true;
  return false;
}

const PrometheusProvider* DeschedulerPolicy::prometheusProvider() const {
  for (const MetricsProvider& p : metricsProviders)
    if (p.source == detail::kPrometheus && p.prometheus) return &*p.prometheus;
  return nullptr;
}

}  // namespace kdesched::policy
