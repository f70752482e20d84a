// pkg/kube/proxy: NO_PROXY matching and the choice of proxy, against Go's rules. Every row of the
// NO_PROXY table was also run through Go 1.26's http.ProxyFromEnvironment (HTTPS_PROXY set,
// NO_PROXY as given, an https:// URL for host:port) and gave the same answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/kube/proxy.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::HasSubstr;

struct NoProxyCase {
  const char* name;
  const char* noProxy;
  const char* host;
  const char* port = "443";
  bool direct;
};

const NoProxyCase kNoProxyCases[] = {
    {.name = "nothing set", .noProxy = "", .host = "api.example.com", .direct = false},
    {.name = "star is everything", .noProxy = "*", .host = "api.example.com", .direct = true},
    {.name = "star among others is still everything", .noProxy = "a.org, *", .host = "10.0.0.1", .direct = true},
    {.name = "a domain names itself", .noProxy = "example.com", .host = "example.com", .direct = true},
    {.name = "a domain names its subdomains", .noProxy = "example.com", .host = "api.example.com", .direct = true},
    {.name = "a domain is not a suffix of a word", .noProxy = "example.com", .host = "notexample.com", .direct = false},
    {.name = "a leading dot: subdomains only", .noProxy = ".example.com", .host = "example.com", .direct = false},
    {.name = "a leading dot names subdomains", .noProxy = ".example.com", .host = "api.example.com", .direct = true},
    {.name = "star-dot is a leading dot", .noProxy = "*.example.com", .host = "example.com", .direct = false},
    {.name = "star-dot names subdomains", .noProxy = "*.example.com", .host = "a.b.example.com", .direct = true},
    {.name = "case does not matter", .noProxy = "EXAMPLE.com", .host = "Api.Example.COM", .direct = true},
    {.name = "spaces around entries", .noProxy = " a.org ,  example.com ", .host = "x.example.com", .direct = true},
    {.name = "empty entries are skipped", .noProxy = ",,example.com,", .host = "example.com", .direct = true},
    {.name = "domain with the right port",
     .noProxy = "example.com:6443",
     .host = "api.example.com",
     .port = "6443",
     .direct = true},
    {.name = "domain with another port", .noProxy = "example.com:6443", .host = "api.example.com", .direct = false},
    {.name = "an IP names itself", .noProxy = "10.0.0.1", .host = "10.0.0.1", .direct = true},
    {.name = "an IP names no other", .noProxy = "10.0.0.1", .host = "10.0.0.2", .direct = false},
    {.name = "IP with the right port", .noProxy = "10.0.0.1:6443", .host = "10.0.0.1", .port = "6443", .direct = true},
    {.name = "IP with another port", .noProxy = "10.0.0.1:6443", .host = "10.0.0.1", .direct = false},
    {.name = "a CIDR holds the address", .noProxy = "10.0.0.0/8", .host = "10.96.0.1", .direct = true},
    {.name = "a CIDR without it", .noProxy = "10.0.0.0/8", .host = "11.0.0.1", .direct = false},
    {.name = "a CIDR with host bits set", .noProxy = "10.1.2.3/16", .host = "10.1.200.1", .direct = true},
    {.name = "a CIDR never names a host name",
     .noProxy = "10.0.0.0/8",
     .host = "kubernetes.default.svc",
     .direct = false},
    {.name = "a CIDR with a port is no CIDR", .noProxy = "10.0.0.0/8:443", .host = "10.0.0.1", .direct = false},
    {.name = "a domain never names an IP", .noProxy = "0.0.1", .host = "10.0.0.1", .direct = false},
    {.name = "an IPv6 CIDR", .noProxy = "fd00::/8", .host = "fd12::1", .direct = true},
    {.name = "an IPv6 address", .noProxy = "fd00::1", .host = "fd00::1", .direct = true},
    {.name = "a bracketed IPv6 with its port", .noProxy = "[fd00::1]:443", .host = "fd00::1", .direct = true},
    {.name = "a bracketed IPv6 with another port", .noProxy = "[fd00::1]:6443", .host = "fd00::1", .direct = false},
    {.name = "an entry without a host is skipped", .noProxy = ":443", .host = "api.example.com", .direct = false},
    {.name = "localhost is always direct", .noProxy = "", .host = "localhost", .direct = true},
    {.name = "only lower-case localhost", .noProxy = "", .host = "LOCALHOST", .direct = false},
    {.name = "127/8 is loopback", .noProxy = "", .host = "127.1.2.3", .direct = true},
    {.name = "::1 is loopback", .noProxy = "", .host = "::1", .direct = true},
    {.name = "a name for loopback is not", .noProxy = "", .host = "localhost.localdomain", .direct = false},
};

TEST(NoProxy, MatchesAsGoDoes) {
  for (const NoProxyCase& c : kNoProxyCases) {
    EXPECT_EQ(bypassesProxy(c.noProxy, c.host, c.port), c.direct)
        << c.name << ": NO_PROXY=\"" << c.noProxy << "\" host " << c.host << ":" << c.port;
  }
}

ProxyEnvironment environment(std::string https, std::string http = "", std::string noProxy = "") {
  ProxyEnvironment env;
  env.httpsProxy = std::move(https);
  env.httpsProxyVar = env.httpsProxy.empty() ? "" : "HTTPS_PROXY";
  env.httpProxy = std::move(http);
  env.httpProxyVar = env.httpProxy.empty() ? "" : "http_proxy";
  env.noProxy = std::move(noProxy);
  return env;
}

TEST(ChooseProxy, TheSchemePicksTheVariable) {
  const ProxyEnvironment env = environment("http://secure.corp:3128", "http://plain.corp:8080");
  auto https = chooseProxy("https://api.example.com:6443", "", env);
  ASSERT_TRUE(https.isOk()) << https.error();
  EXPECT_EQ(https->describe(), "http://secure.corp:3128 (HTTPS_PROXY)");
  auto http = chooseProxy("http://api.example.com:8080", "", env);
  ASSERT_TRUE(http.isOk()) << http.error();
  EXPECT_EQ(http->describe(), "http://plain.corp:8080 (http_proxy)");
  auto none = chooseProxy("https://api.example.com", "", environment("", "http://plain.corp:8080"));
  ASSERT_TRUE(none.isOk());
  EXPECT_EQ(none->describe(), "none (HTTPS_PROXY is not set)");
}

TEST(ChooseProxy, NoProxyAndLoopbackGoDirect) {
  auto listed = chooseProxy("https://10.96.0.1:443", "", environment("http://p.corp:3128", "", "10.0.0.0/8"));
  ASSERT_TRUE(listed.isOk());
  EXPECT_EQ(listed->describe(), "none (NO_PROXY names 10.96.0.1)");
  auto loopback = chooseProxy("https://127.0.0.1:6443", "", environment("http://p.corp:3128"));
  ASSERT_TRUE(loopback.isOk());
  EXPECT_EQ(loopback->describe(), "none (127.0.0.1 is loopback)");
  // The server's default port counts for a NO_PROXY entry with a port.
  auto port = chooseProxy("https://api.example.com/prefix", "", environment("p.corp:1", "", "example.com:443"));
  ASSERT_TRUE(port.isOk());
  EXPECT_FALSE(port->proxy);
}

TEST(ChooseProxy, TheKubeconfigWinsEvenForLoopbackAndNoProxy) {
  auto r = chooseProxy("https://127.0.0.1:6443", "http://kube.corp:3128", environment("http://env.corp:3128", "", "*"));
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->describe(), "http://kube.corp:3128 (kubeconfig proxy-url)");
}

TEST(ChooseProxy, AValueWithoutSchemeIsHttpAndPortsDefaultByScheme) {
  auto bare = chooseProxy("https://api:6443", "", environment("proxy.corp:3128"));
  ASSERT_TRUE(bare.isOk()) << bare.error();
  EXPECT_EQ(bare->proxy->withoutUserinfo(), "http://proxy.corp:3128");
  auto noPort = chooseProxy("https://api:6443", "", environment("http://proxy.corp"));
  ASSERT_TRUE(noPort.isOk());
  EXPECT_EQ(noPort->proxy->port, "80") << "Go's default for an http:// proxy, not cpprestsdk's";
  // The kubeconfig's proxy-url must say its scheme, as client-go's url.Parse + scheme check want.
  EXPECT_FALSE(chooseProxy("https://api:6443", "proxy.corp:3128", {}).isOk());
}

TEST(ChooseProxy, UserinfoIsCredentialsAndNeverShown) {
  auto r = chooseProxy("https://api:6443", "", environment("http://alice:s%40cret@proxy.corp:3128/"));
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->proxy->user, "alice");
  EXPECT_EQ(r->proxy->password, "s@cret");
  EXPECT_EQ(r->describe(), "http://redacted@proxy.corp:3128 (HTTPS_PROXY)");
}

TEST(ChooseProxy, AProxyCpprestCannotSpeakIsAnErrorNamingItsSource) {
  auto socks = chooseProxy("https://api:6443", "", environment("socks5://bob:pw@gw.corp:1080"));
  ASSERT_FALSE(socks.isOk());
  EXPECT_THAT(socks.error(), HasSubstr("HTTPS_PROXY=\"socks5://redacted@gw.corp:1080\": SOCKS5 proxies are not "
                                       "supported"));
  EXPECT_THAT(socks.error(), ::testing::Not(HasSubstr("pw")));
  auto tls = chooseProxy("https://api:6443", "https://gw.corp", {});
  ASSERT_FALSE(tls.isOk());
  EXPECT_THAT(tls.error(), HasSubstr("proxy-url=\"https://gw.corp:443\": a proxy reached over TLS"));
  // Not used for this server: no reason to refuse it.
  auto bypassed = chooseProxy("https://api:6443", "", environment("socks5://gw.corp", "", "api"));
  EXPECT_TRUE(bypassed.isOk()) << bypassed.error();
}

TEST(ChooseProxy, HttpProxyIsRefusedUnderCgiAsGoDoes) {
  ProxyEnvironment env = environment("", "http://plain.corp:8080");
  env.cgi = true;
  auto r = chooseProxy("http://api:8080", "", env);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.error(), HasSubstr("http_proxy is set in a CGI environment"));
  env.httpsProxy = "http://secure.corp:3128";
  env.httpsProxyVar = "HTTPS_PROXY";
  EXPECT_TRUE(chooseProxy("https://api:6443", "", env).isOk()) << "the CGI rule is about HTTP_PROXY only";
}

}  // namespace
}  // namespace kdesched::kube::testing
