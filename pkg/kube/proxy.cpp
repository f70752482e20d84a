#include "pkg/kube/proxy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <tuple>
#include <vector>

namespace kdesched::kube {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string defaultPort(std::string_view scheme) {
  if (scheme == "https") return "443";
  if (scheme == "socks5" || scheme == "socks5h") return "1080";
  return "80";
}

// An address as 16 bytes, IPv4 as IPv4-mapped IPv6, so that 10.0.0.1 and ::ffff:10.0.0.1 are equal
// as Go's net.IP.Equal has them.
using Ip = std::array<unsigned char, 16>;

std::optional<Ip> parseIp(std::string_view text) {
  std::string s(text);
  if (const auto zone = s.find('%'); zone != std::string::npos) s.resize(zone);
  Ip ip{};
  unsigned char v4[4];
  if (inet_pton(AF_INET, s.c_str(), v4) == 1) {
    ip[10] = ip[11] = 0xff;
    std::copy(v4, v4 + 4, ip.begin() + 12);
    return ip;
  }
  if (inet_pton(AF_INET6, s.c_str(), ip.data()) == 1) return ip;
  return std::nullopt;
}

bool isV4(const Ip& ip) {
  return std::all_of(ip.begin(), ip.begin() + 10, [](unsigned char b) { return b == 0; }) && ip[10] == 0xff &&
         ip[11] == 0xff;
}

bool isLoopback(const Ip& ip) {
  if (isV4(ip)) return ip[12] == 127;
  return std::all_of(ip.begin(), ip.begin() + 15, [](unsigned char b) { return b == 0; }) && ip[15] == 1;
}

struct Cidr {
  Ip base;
  int bits;  // counted on the 16-byte form
  bool contains(const Ip& ip) const {
    for (int i = 0; i < bits; ++i) {
      const unsigned char mask = static_cast<unsigned char>(0x80 >> (i % 8));
      if ((base[i / 8] & mask) != (ip[i / 8] & mask)) return false;
    }
    return true;
  }
};

std::optional<Cidr> parseCidr(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view addr = text.substr(0, slash), len = text.substr(slash + 1);
  if (addr.find('%') != std::string_view::npos || len.empty() || len.size() > 3) return std::nullopt;
  if (!std::all_of(len.begin(), len.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  auto ip = parseIp(addr);
  if (!ip) return std::nullopt;
  const int n = std::atoi(std::string(len).c_str());
  const bool v4 = addr.find(':') == std::string_view::npos;
  if (n > (v4 ? 32 : 128)) return std::nullopt;
  return Cidr{*ip, v4 ? n + 96 : n};
}

// Go's net.SplitHostPort: "host:port" or "[host]:port", else nothing (no port, or an IPv6 address
// without brackets).
bool splitHostPort(std::string_view s, std::string& host, std::string& port) {
  if (!s.empty() && s.front() == '[') {
    const auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
    return port.find_first_of("[]:") == std::string::npos;
  }
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || s.find(':', colon + 1) != std::string_view::npos) return false;
  host = s.substr(0, colon);
  port = s.substr(colon + 1);
  return host.find_first_of("[]") == std::string::npos;
}

struct NoProxyEntry {
  enum class Kind { All, Cidr, Ip, Domain } kind;
  Cidr cidr{};
  Ip ip{};
  std::string domain = {};  // with its leading '.'
  bool matchSelf = false;   // "example.com" matches example.com too; ".example.com" only below it
  std::string port = {};    // empty: any
};

std::optional<NoProxyEntry> parseEntry(std::string_view raw) {
  const std::string p = lower(trim(raw));
  if (p.empty()) return std::nullopt;
  if (p == "*") return NoProxyEntry{.kind = NoProxyEntry::Kind::All};
  if (auto cidr = parseCidr(p)) return NoProxyEntry{.kind = NoProxyEntry::Kind::Cidr, .cidr = *cidr};
  std::string host, port;
  if (!splitHostPort(p, host, port)) {
    host = p;
    port.clear();
  }
  if (host.empty()) return std::nullopt;
  if (auto ip = parseIp(host); ip && host.find('%') == std::string::npos) {
    return NoProxyEntry{.kind = NoProxyEntry::Kind::Ip, .ip = *ip, .port = port};
  }
  if (host.rfind("*.", 0) == 0) host.erase(0, 1);
  NoProxyEntry e{.kind = NoProxyEntry::Kind::Domain, .port = port};
  e.matchSelf = host.front() != '.';
  e.domain = e.matchSelf ? "." + host : host;
  return e;
}

bool entryMatches(const NoProxyEntry& e, const std::string& host, std::string_view port, const std::optional<Ip>& ip) {
  const bool portOk = e.port.empty() || e.port == port;
  switch (e.kind) {
    case NoProxyEntry::Kind::All: return true;
    case NoProxyEntry::Kind::Cidr: return ip && e.cidr.contains(*ip);
    case NoProxyEntry::Kind::Ip: return ip && *ip == e.ip && portOk;
    case NoProxyEntry::Kind::Domain:
      if (ip) return false;
      if (host.size() >= e.domain.size() && host.compare(host.size() - e.domain.size(), e.domain.size(), e.domain) == 0)
        return portOk;
      return e.matchSelf && host == std::string_view(e.domain).substr(1) && portOk;
  }
  return false;
}

std::string percentDecode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

struct Target {
  std::string scheme, host, port;
};

// "https://host:port/prefix" into its scheme, host (brackets dropped) and port (the default when
// absent), as Go's canonicalAddr has them.
Target targetOf(const std::string& server) {
  Target t;
  const auto sep = server.find("://");
  t.scheme = lower(server.substr(0, sep));
  std::string_view rest =
      sep == std::string::npos ? std::string_view(server) : std::string_view(server).substr(sep + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (!splitHostPort(rest, t.host, t.port)) {
    t.host = rest;
    t.port.clear();
  }
  if (t.host.size() > 2 && t.host.front() == '[' && t.host.back() == ']') t.host = t.host.substr(1, t.host.size() - 2);
  if (t.port.empty()) t.port = defaultPort(t.scheme);
  return t;
}

std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The first of the names with a non-empty value, and that name.
std::pair<std::string, std::string> firstSet(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (std::string v = envOr(n); !v.empty()) return {std::move(v), n};
  }
  return {};
}

}  // namespace

ProxyEnvironment ProxyEnvironment::fromProcess() {
  ProxyEnvironment env;
  std::tie(env.httpProxy, env.httpProxyVar) = firstSet({"HTTP_PROXY", "http_proxy"});
  std::tie(env.httpsProxy, env.httpsProxyVar) = firstSet({"HTTPS_PROXY", "https_proxy"});
  env.noProxy = firstSet({"NO_PROXY", "no_proxy"}).first;
  env.cgi = !envOr("REQUEST_METHOD").empty();
  return env;
}

std::string ProxyUrl::withoutUserinfo() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + port;
}

std::string ProxyUrl::redacted() const {
  if (!hasUserinfo) return withoutUserinfo();
  const std::string plain = withoutUserinfo();
  const auto at = plain.find("://") + 3;
  return plain.substr(0, at) + "redacted@" + plain.substr(at);
}

Result<ProxyUrl> parseProxyUrl(std::string_view raw, bool assumeHttp) {
  const std::string text(trim(raw));
  std::string full = text;
  if (text.find("://") == std::string::npos) {
    if (!assumeHttp) return Status::error("\"" + text + "\" is not a URL: write it as http://HOST:PORT");
    full = "http://" + text;
  }
  ProxyUrl out;
  const auto sep = full.find("://");
  out.scheme = lower(full.substr(0, sep));
  std::string_view authority = std::string_view(full).substr(sep + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view info = authority.substr(0, at);
    const auto colon = info.find(':');
    out.user = percentDecode(info.substr(0, colon));
    if (colon != std::string_view::npos) out.password = percentDecode(info.substr(colon + 1));
    out.hasUserinfo = true;
    authority.remove_prefix(at + 1);
  }
  if (!splitHostPort(authority, out.host, out.port)) {
    out.host = authority;
    out.port.clear();
  }
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.empty()) return Status::error("\"" + text + "\" names no proxy host");
  if (!std::all_of(out.port.begin(), out.port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Status::error("\"" + text + "\" has a port that is not a number");
  if (out.port.empty()) out.port = defaultPort(out.scheme);
  return out;
}

bool bypassesProxy(std::string_view noProxy, std::string_view hostIn, std::string_view port) {
  if (hostIn == "localhost") return true;
  const std::optional<Ip> ip = parseIp(hostIn);
  if (ip && isLoopback(*ip)) return true;
  const std::string host = lower(trim(hostIn));
  std::size_t begin = 0;
  while (begin <= noProxy.size()) {
    const auto comma = std::min(noProxy.find(',', begin), noProxy.size());
    if (auto e = parseEntry(noProxy.substr(begin, comma - begin)); e && entryMatches(*e, host, port, ip)) return true;
    begin = comma + 1;
  }
  return false;
}

std::string ProxyChoice::describe() const {
  return proxy ? proxy->redacted() + " (" + reason + ")" : "none (" + reason + ")";
}

Status checkProxySupported(const ProxyUrl& proxy, const std::string& where) {
  const std::string shown = where + "=\"" + proxy.redacted() + "\"";
  if (proxy.scheme == "socks5" || proxy.scheme == "socks5h") {
    return Status::error(shown +
                         ": SOCKS5 proxies are not supported (kdesched's HTTP client, cpprestsdk, speaks only "
                         "HTTP CONNECT to a proxy); use an http:// proxy, or run kdesched where the server is "
                         "reachable directly");
  }
  if (proxy.scheme == "https") {
    return Status::error(shown +
                         ": a proxy reached over TLS (https://) is not supported (cpprestsdk sends CONNECT in the "
                         "clear); use the proxy's http:// address");
  }
  if (proxy.scheme != "http") {
    return Status::error(shown + ": unsupported scheme \"" + proxy.scheme + "\", must be http");
  }
  if (proxy.host.find(':') != std::string::npos) {
    return Status::error(shown +
                         ": an IPv6 address as the proxy host is not supported (cpprestsdk resolves the "
                         "bracketed form); give the proxy a DNS name");
  }
  return Status::ok();
}

Result<ProxyChoice> chooseProxy(const std::string& server, const std::string& proxyUrl, const ProxyEnvironment& env) {
  if (!proxyUrl.empty()) {
    auto parsed = parseProxyUrl(proxyUrl, false);
    if (!parsed.isOk()) return Status::error("proxy-url: " + parsed.error());
    if (Status s = checkProxySupported(*parsed, "proxy-url"); !s.isOk()) return s;
    return ProxyChoice{std::move(*parsed), "kubeconfig proxy-url"};
  }
  const Target t = targetOf(server);
  const bool https = t.scheme == "https";
  const std::string& value = https ? env.httpsProxy : env.httpProxy;
  const std::string& var = https ? env.httpsProxyVar : env.httpProxyVar;
  if (value.empty()) return ProxyChoice{std::nullopt, https ? "HTTPS_PROXY is not set" : "HTTP_PROXY is not set"};
  if (!https && env.cgi) {
    return Status::error(var +
                         " is set in a CGI environment (REQUEST_METHOD is set): refusing it, as Go does, since "
                         "a client may have set it; unset REQUEST_METHOD or " +
                         var);
  }
  if (bypassesProxy(env.noProxy, t.host, t.port)) {
    const bool loopback = bypassesProxy("", t.host, t.port);
    return ProxyChoice{std::nullopt, loopback ? t.host + " is loopback" : "NO_PROXY names " + t.host};
  }
  auto parsed = parseProxyUrl(value, true);
  if (!parsed.isOk()) return Status::error(var + ": " + parsed.error());
  if (Status s = checkProxySupported(*parsed, var); !s.isOk()) return s;
  return ProxyChoice{std::move(*parsed), var};
}

}  // namespace kdesched::kube
