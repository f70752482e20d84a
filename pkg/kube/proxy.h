// Which HTTP proxy a request goes through, decided as client-go decides it: the kubeconfig's
// proxy-url for every request when set; otherwise the environment, read as Go's net/http reads it
// (ProxyFromEnvironment: HTTPS_PROXY for https targets, HTTP_PROXY for http ones, NO_PROXY to go
// direct, loopback always direct). Pure functions over a ProxyEnvironment value, so tests pass the
// environment in; only ProxyEnvironment::fromProcess() reads the real one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pkg/base/status.h"

namespace kdesched::kube {

struct ProxyEnvironment {
  // Each value with the variable it came from ("HTTPS_PROXY" or "https_proxy"), for messages.
  std::string httpProxy, httpProxyVar;
  std::string httpsProxy, httpsProxyVar;
  std::string noProxy;
  // REQUEST_METHOD is set: a CGI request may have set HTTP_PROXY from a "Proxy:" header, so Go
  // refuses HTTP_PROXY then (golang.org/s/cgihttpproxy).
  bool cgi = false;

  // The upper-case name first, then the lower-case one; an empty value counts as unset (Go's rule).
  static ProxyEnvironment fromProcess();
};

struct ProxyUrl {
  std::string scheme;          // "http", "https", "socks5", ...
  std::string host;            // without brackets for IPv6
  std::string port;            // always set: the scheme's default when the URL has none
  std::string user, password;  // percent-decoded; empty without userinfo
  bool hasUserinfo = false;

  // "http://proxy.corp:3128", without the userinfo.
  std::string withoutUserinfo() const;
  // For logs and errors: the userinfo, if any, as "redacted@".
  std::string redacted() const;
};

// Parses a proxy URL. `assumeHttp`: a value without "scheme://" is taken as http://VALUE, as Go
// does for the environment variables (the kubeconfig's proxy-url must name its scheme).
Result<ProxyUrl> parseProxyUrl(std::string_view text, bool assumeHttp);

// Go's NO_PROXY rule: whether a request to host:port (host without brackets, port always set)
// goes direct. Entries, comma-separated, case-insensitive: "*" (everything), an IP ("10.0.0.1"),
// a CIDR ("10.0.0.0/8"), a domain ("example.com": itself and its subdomains; ".example.com" and
// "*.example.com": subdomains only), any of them but the CIDR with ":port". A domain entry never
// matches an IP host. localhost and loopback addresses always go direct, whatever NO_PROXY says.
bool bypassesProxy(std::string_view noProxy, std::string_view host, std::string_view port);

struct ProxyChoice {
  std::optional<ProxyUrl> proxy;  // unset: connect directly
  std::string reason;             // where the proxy came from, or why there is none ("NO_PROXY", "loopback", ...)

  // "http://proxy.corp:3128 (HTTPS_PROXY)", or "none (no proxy variable is set)".
  std::string describe() const;
};

// The proxy for requests to `server` ("https://host:port/..."). `proxyUrl` (the kubeconfig's
// proxy-url) wins and applies to every request, NO_PROXY and loopback included, as in client-go.
// A proxy kdesched cannot speak (socks5://, https://: cpprestsdk sends CONNECT in the clear only)
// is an error naming where it came from, never a silent direct connection.
Result<ProxyChoice> chooseProxy(const std::string& server, const std::string& proxyUrl, const ProxyEnvironment& env);

// Whether kdesched can connect through this proxy; an error saying why not and what to do. `where`
// names the setting ("clusters[\"c\"].cluster.proxy-url", "HTTPS_PROXY").
Status checkProxySupported(const ProxyUrl& proxy, const std::string& where);

}  // namespace kdesched::kube
