// pkg/kube over real HTTP: the cpprestsdk transport against the scripted stub (test/stub), for the
// faults a real API server cannot be made to produce on demand, and TLS verification.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

#include "pkg/kube/cpprest_transport.h"
#include "pkg/kube/reflector.h"
#include "test/unit/kube/connect_proxy.h"
#include "test/unit/kube/fakes.h"
#include "test/unit/kube/support.h"

namespace kdesched::kube::testing {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

json list(const std::vector<std::string>& items, const std::string& rv, const std::string& cont = "") {
  return json::parse(podList(items, rv, cont));
}

json rule(const std::string& path, json query, json responses) {
  return {{"method", "GET"}, {"path", path}, {"query", std::move(query)}, {"responses", std::move(responses)}};
}

json stream(const std::vector<std::string>& lines, const std::string& end, bool split = false) {
  return {{"status", 200}, {"stream", lines}, {"end", end}, {"split", split}, {"delay_ms", 5}};
}

class StubTest : public ::testing::Test {
 protected:
  void startStub(const json& rules, const std::string& cert = "", const std::string& key = "",
                 const std::string& clientCa = "") {
    const std::string script = dir_.write("script.json", json{{"rules", rules}}.dump());
    stub_ = std::make_unique<StubProcess>(script, cert, key, clientCa);
  }

  ClientConfig config(const std::string& scheme = "http") {
    ClientConfig cfg;
    cfg.server = stub_->url(scheme);
    cfg.bearerToken = "stub-token";
    cfg.qps = -1;
    return cfg;
  }

  std::unique_ptr<Client> client(const ClientConfig& cfg, std::shared_ptr<Clock> clock = systemClock()) {
    auto transport = makeCpprestTransport(cfg);
    EXPECT_TRUE(transport.isOk()) << transport.error();
    return std::make_unique<Client>(cfg, std::move(transport).value(), std::move(clock));
  }

  // What the stub received, as "METHOD target" lines.
  std::vector<std::string> received() {
    auto c = client(config());
    auto r = c->get("/__stub/requests");
    EXPECT_TRUE(r.isOk()) << r.error().describe();
    std::vector<std::string> out;
    if (!r.isOk()) return out;
    for (const auto& req : json::parse(r->body)) {
      const std::string target = req["target"];
      if (!target.starts_with("/__stub/")) out.push_back(req["method"].get<std::string>() + " " + target);
    }
    return out;
  }

  // The paged LIST path, which these cases are about; WatchListOverHttp turns the watch-list on.
  static ReflectorOptions fastOptions() {
    ReflectorOptions o;
    o.backoff.initial = 10ms;
    o.backoff.cap = 50ms;
    o.watchList = false;
    return o;
  }

  TempDir dir_;
  std::unique_ptr<StubProcess> stub_;
  cluster::Store store_;
};

class CountingObserver final : public ReflectorObserver {
 public:
  void onWatchRestart(api::Kind, const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu);
    restarts.push_back(reason);
  }
  void onRelist(api::Kind, const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu);
    relists.push_back(reason);
  }
  std::mutex mu;
  std::vector<std::string> restarts, relists;
};

std::set<std::string> podKeys(const cluster::Store& store) {
  std::set<std::string> out;
  for (const api::Pod* p : store.snapshot()->pods()) out.insert(p->key());
  return out;
}

TEST_F(StubTest, ReflectorSurvivesA500PagesChunkSplitsAndAMalformedLine) {
  startStub(json::array({
      rule("/api/v1/pods", {{"watch", nullptr}, {"continue", nullptr}, {"resourceVersion", nullptr}},
           json::array(
               {{{"status", 500}, {"json", json::parse(statusJson(500, "InternalError", "etcd leader changed"))}},
                {{"json", list({podJson("a", "5"), podJson("b", "6")}, "10", "page2")}},
                // The relist after the malformed line: the current state again, paged.
                {{"json", list({podJson("a", "5"), podJson("c", "11"), podJson("y", "29")}, "30")}}})),
      rule("/api/v1/pods", {{"watch", nullptr}, {"continue", "page2"}},
           json::array({{{"json", list({podJson("x", "7")}, "10")}}})),
      rule("/api/v1/pods", {{"watch", "true"}, {"resourceVersion", "10"}},
           json::array({stream({event("ADDED", podJson("c", "11")), R"({"type":"ADDED","object":{"metadata":{"na)",
                                event("ADDED", podJson("never", "12"))},
                               "hang", /*split=*/true)})),
      rule("/api/v1/pods", {{"watch", "true"}, {"resourceVersion", "30"}}, json::array({stream({}, "hang")})),
  }));
  auto c = client(config());
  CountingObserver observer;
  Reflector r(*c, kPods, store_, fastOptions(), &observer);
  r.start();
  ASSERT_TRUE(waitUntil([&] { return r.lastResourceVersion() == "30"; }, 10s));
  // The watch from 30 is open (and hangs): stop must cut it at once.
  ASSERT_TRUE(waitUntil([&] { return received().size() == 6; }, 5s));
  ASSERT_TRUE(returns([&] { r.stop(); })) << "the hanging watch must be cut, not waited out";

  EXPECT_TRUE(r.synced());
  EXPECT_EQ(podKeys(store_), (std::set<std::string>{"default/a", "default/c", "default/y"}));
  const auto got = received();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0], "GET /api/v1/pods?limit=500");
  EXPECT_EQ(got[1], "GET /api/v1/pods?limit=500");
  EXPECT_EQ(got[2], "GET /api/v1/pods?limit=500&continue=page2");
  EXPECT_THAT(got[3],
              HasSubstr("GET /api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds="));
  EXPECT_EQ(got[4], "GET /api/v1/pods?limit=500");
  EXPECT_THAT(got[5], HasSubstr("resourceVersion=30"));
  std::lock_guard<std::mutex> lock(observer.mu);
  EXPECT_THAT(observer.relists, ElementsAre("malformed"));
}

TEST_F(StubTest, ConnectionCutMidChunkRewatchesFromTheLastVersion) {
  startStub(json::array({
      rule("/api/v1/pods", {{"watch", nullptr}}, json::array({{{"json", list({podJson("a", "5")}, "10")}}})),
      rule("/api/v1/pods", {{"watch", "true"}, {"resourceVersion", "10"}},
           json::array({stream({event("ADDED", podJson("b", "11"))}, "cut")})),
      rule("/api/v1/pods", {{"watch", "true"}, {"resourceVersion", "11"}},
           json::array({stream({bookmark("15")}, "hang")})),
  }));
  auto c = client(config());
  CountingObserver observer;
  Reflector r(*c, kPods, store_, fastOptions(), &observer);
  r.start();
  ASSERT_TRUE(waitUntil([&] { return r.lastResourceVersion() == "15"; }, 10s));
  r.stop();
  EXPECT_EQ(podKeys(store_), (std::set<std::string>{"default/a", "default/b"}));
  const auto got = received();
  ASSERT_EQ(got.size(), 3u) << "a broken stream is re-watched, not relisted";
  EXPECT_THAT(got[2], HasSubstr("resourceVersion=11"));
  std::lock_guard<std::mutex> lock(observer.mu);
  EXPECT_THAT(observer.restarts, ElementsAre("broken"));
  EXPECT_TRUE(observer.relists.empty());
}

// Many events in one HTTP chunk (the client's buffer holds them all at once), then one split in
// two: every event arrives, in order, whatever the reader does with the consumed front.
TEST_F(StubTest, ManyEventsInOneChunkAllArriveInOrder) {
  std::vector<std::string> lines;
  std::set<std::string> want;
  for (int i = 0; i < 300; ++i) {
    const std::string name = "p" + std::to_string(i);
    lines.push_back(event("ADDED", podJson(name, std::to_string(11 + i))));
    want.insert("default/" + name);
  }
  json together = stream(lines, "hang");
  together["together"] = true;
  startStub(json::array({
      rule("/api/v1/pods", {{"watch", nullptr}}, json::array({{{"json", list({}, "10")}}})),
      rule("/api/v1/pods", {{"watch", "true"}, {"resourceVersion", "10"}}, json::array({together})),
  }));
  auto c = client(config());
  Reflector r(*c, kPods, store_, fastOptions());
  r.start();
  ASSERT_TRUE(waitUntil([&] { return r.lastResourceVersion() == "310"; }, 10s)) << r.lastResourceVersion();
  ASSERT_TRUE(returns([&] { r.stop(); }));
  EXPECT_EQ(podKeys(store_), want);
}

// The watch-list over real HTTP, its lines split across chunks: the state is replaced at the
// closing bookmark, then the same connection carries the changes; no LIST at all.
TEST_F(StubTest, WatchListOverHttp) {
  startStub(json::array({
      rule("/api/v1/pods", {{"watch", "true"}, {"sendInitialEvents", "true"}, {"resourceVersion", nullptr}},
           json::array({stream({event("ADDED", podJson("a", "5")), event("ADDED", podJson("b", "6")),
                                initialEventsEnd("10"), event("DELETED", podJson("b", "11"))},
                               "hang", /*split=*/true)})),
  }));
  auto c = client(config());
  ReflectorOptions o = fastOptions();
  o.watchList = true;
  Reflector r(*c, kPods, store_, o);
  r.start();
  ASSERT_TRUE(waitUntil([&] { return r.lastResourceVersion() == "11"; }, 10s));
  ASSERT_TRUE(returns([&] { r.stop(); }));
  EXPECT_TRUE(r.synced());
  EXPECT_EQ(podKeys(store_), (std::set<std::string>{"default/a"}));
  const auto got = received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_THAT(got[0], HasSubstr("GET /api/v1/pods?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&"
                                "resourceVersionMatch=NotOlderThan&timeoutSeconds="));
}

TEST_F(StubTest, RetryAfterIsHonouredOverHttp) {
  startStub(json::array({rule("/api/v1/nodes", json::object(),
                              json::array({{{"status", 429},
                                            {"headers", {{"Retry-After", "1"}}},
                                            {"json", json::parse(statusJson(429, "TooManyRequests", "slow down"))}},
                                           stream({R"({"kind":"NodeList",)", R"("items":[]})"}, "close")}))}));
  auto clock = std::make_shared<FakeClock>();
  ClientConfig cfg = config();
  cfg.requestTimeout = {};  // its timer would sleep on the fake clock, whose sleeps return at once
  auto c = client(cfg, clock);
  auto r = c->get("/api/v1/nodes");
  ASSERT_TRUE(r.isOk()) << r.error().describe();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"kind\":\"NodeList\",\n\"items\":[]}\n") << "a chunked body is read whole";
  EXPECT_THAT(clock->sleeps(), ElementsAre(1s)) << "waited out the Retry-After the header asked for";
  EXPECT_THAT(received(), ElementsAre("GET /api/v1/nodes", "GET /api/v1/nodes"));
}

// An API server restarted while a connection sat in the client's pool: the next request finds it
// reset as it writes. The server cannot have acted on a request it did not receive, so it goes
// again on a fresh connection (as Go's net/http retries it) instead of failing an eviction that
// was never sent. (daemon.sh caught it once relists no longer went through the pool first.)
TEST_F(StubTest, ARequestOnAConnectionTheServerResetIsSentAgain) {
  startStub(json::array({
      rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.36.5"}}}, {"reset_after_ms", 50}}})),
      {{"method", "POST"},
       {"path", "/api/v1/namespaces/d/pods/p/eviction"},
       {"query", json::object()},
       {"responses", json::array({{{"status", 201}, {"json", {{"kind", "Status"}, {"status", "Success"}}}}})}},
  }));
  auto c = client(config());
  ASSERT_TRUE(c->get("/version").isOk());
  // The stub has reset the kept-alive connection (asked on another connection, which it answers
  // once the reset is done).
  auto resets = client(config())->get("/__stub/resets?atLeast=1");
  ASSERT_TRUE(resets.isOk()) << resets.error().describe();
  ASSERT_EQ(json::parse(resets->body)["resets"], 1);
  auto r = c->post("/api/v1/namespaces/d/pods/p/eviction", R"({"apiVersion":"policy/v1","kind":"Eviction"})");
  ASSERT_TRUE(r.isOk()) << r.error().describe();
  EXPECT_EQ(r->status, 201);
  EXPECT_THAT(received(), ElementsAre("GET /version", "POST /api/v1/namespaces/d/pods/p/eviction"));
}

TEST_F(StubTest, TlsVerificationUsesTheConfiguredCa) {
  const TlsMaterial tls = TlsMaterial::generate(dir_);
  TempDir otherDir;
  const TlsMaterial other = TlsMaterial::generate(otherDir);
  startStub(json::array({rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.31.0"}}}}}))}),
            tls.serverCert, tls.serverKey);

  ClientConfig trusted = config("https");
  trusted.caData = readFile(tls.caCert);
  trusted.clientCertData = readFile(tls.clientCert);
  trusted.clientKeyData = readFile(tls.clientKey);
  auto ok = client(trusted)->get("/version");
  ASSERT_TRUE(ok.isOk()) << ok.error().describe();
  EXPECT_THAT(ok->body, HasSubstr("v1.31.0"));

  auto noCa = client(config("https"))->get("/version");
  ASSERT_FALSE(noCa.isOk()) << "a certificate from an unknown CA must be refused";
  EXPECT_EQ(noCa.error().code, 0);
  EXPECT_THAT(noCa.error().describe(), HasSubstr("handshake"));

  ClientConfig wrongCa = config("https");
  wrongCa.caData = readFile(other.caCert);
  auto wrong = client(wrongCa)->get("/version");
  ASSERT_FALSE(wrong.isOk());
  EXPECT_THAT(wrong.error().describe(), HasSubstr("handshake"));
  // OpenSSL's reason, which cpprestsdk's "Error in SSL handshake" drops, and where to look.
  EXPECT_THAT(wrong.error().describe(),
              HasSubstr("the API server's certificate (IP Address:127.0.0.1, DNS:localhost) failed verification: "
                        "unable to get local issuer certificate: is it signed by the certificate authority the "
                        "kubeconfig names"));

  ClientConfig insecure = config("https");
  insecure.insecureSkipTlsVerify = true;
  auto skipped = client(insecure)->get("/version");
  EXPECT_TRUE(skipped.isOk()) << skipped.error().describe();

  stub_.reset();
  startStub(json::array({rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.31.0"}}}}}))}),
            tls.serverCert, tls.serverKey, tls.caCert);
  ClientConfig mutual = config("https");
  mutual.caData = readFile(tls.caCert);
  mutual.clientCertData = readFile(tls.clientCert);
  mutual.clientKeyData = readFile(tls.clientKey);
  auto withCert = client(mutual)->get("/version");
  EXPECT_TRUE(withCert.isOk()) << "the client certificate is presented: " << withCert.error().describe();
  mutual.clientCertData.clear();
  mutual.clientKeyData.clear();
  auto withoutCert = client(mutual)->get("/version");
  EXPECT_FALSE(withoutCert.isOk()) << "a server that requires a client certificate refuses us without one";

  ClientConfig badCa = config("https");
  badCa.caData = "not a certificate";
  auto bad = makeCpprestTransport(badCa);
  ASSERT_FALSE(bad.isOk());
  EXPECT_THAT(bad.error(), HasSubstr("certificate authority: no PEM certificate found"));
}

// The right CA, but a certificate issued for another name than the address kdesched connects to:
// refused, and the message says which names it has. Its subject CN is 127.0.0.1 (TlsMaterial's):
// cpprestsdk alone accepted it on that, Go's client (and so kdesched) reads the SANs only.
TEST_F(StubTest, ACertificateForAnotherNameIsRefusedWithItsNames) {
  const TlsMaterial tls = TlsMaterial::generate(dir_, "DNS:api.example.com");
  startStub(json::array({rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.31.0"}}}}}))}),
            tls.serverCert, tls.serverKey);
  ClientConfig cfg = config("https");
  cfg.caData = readFile(tls.caCert);
  auto r = client(cfg)->get("/version");
  ASSERT_FALSE(r.isOk()) << "a certificate for api.example.com must not be accepted for 127.0.0.1";
  EXPECT_THAT(r.error().describe(),
              HasSubstr("the API server's certificate is not issued for \"127.0.0.1\" (it names DNS:api.example.com)"));
}

// insecure-skip-tls-verify works (the kubeconfig says so), with a warning that says what it costs.
TEST_F(StubTest, SkippingVerificationIsAWarning) {
  LogCapture logs;
  ClientConfig cfg;
  cfg.server = "https://127.0.0.1:1";
  cfg.insecureSkipTlsVerify = true;
  ASSERT_TRUE(makeCpprestTransport(cfg).isOk());
  const auto lines = logs.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("level=warn msg=\"the API server's certificate is not verified "
                                  "(insecure-skip-tls-verify in the kubeconfig)\" server=https://127.0.0.1:1"));
  cfg.insecureSkipTlsVerify = false;
  ASSERT_TRUE(makeCpprestTransport(cfg).isOk());
  EXPECT_EQ(logs.lines().size(), 1u);
}

// The kubeconfig's proxy-url: the request goes through it (CONNECT naming the API server's
// host:port, even for a loopback server, as client-go's http.ProxyURL does), and the API server's
// certificate is still verified end to end through the tunnel.
TEST_F(StubTest, AProxyUrlTunnelsTheRequestAndTlsIsStillVerified) {
  const TlsMaterial tls = TlsMaterial::generate(dir_);
  TempDir otherDir;
  const TlsMaterial other = TlsMaterial::generate(otherDir);
  startStub(json::array({rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.31.0"}}}}}))}),
            tls.serverCert, tls.serverKey);
  ConnectProxy proxy("Proxy-Authorization: Basic " + base64("alice:s@cret"));
  ClientConfig cfg = config("https");
  cfg.caData = readFile(tls.caCert);
  cfg.proxyUrl = "http://alice:s%40cret@127.0.0.1:" + std::to_string(proxy.port());
  auto ok = client(cfg)->get("/version");
  ASSERT_TRUE(ok.isOk()) << ok.error().describe();
  EXPECT_THAT(ok->body, HasSubstr("v1.31.0"));
  const std::string connect = "CONNECT 127.0.0.1:" + std::to_string(stub_->port()) + " HTTP/1.1";
  EXPECT_THAT(proxy.requestLines(), ElementsAre(connect));
  EXPECT_THAT(proxy.heads().at(0), HasSubstr("\r\nProxy-Authorization: Basic " + base64("alice:s@cret") + "\r\n"));

  ClientConfig wrongCa = cfg;
  wrongCa.caData = readFile(other.caCert);
  auto refused = client(wrongCa)->get("/version");
  ASSERT_FALSE(refused.isOk()) << "the tunnel must not weaken the certificate check";
  EXPECT_THAT(refused.error().describe(),
              HasSubstr("the API server's certificate (IP Address:127.0.0.1, DNS:localhost) failed verification"));
  EXPECT_THAT(proxy.requestLines(), ElementsAre(connect, connect));

  ClientConfig anonymous = cfg;
  anonymous.proxyUrl = proxy.url();
  auto denied = client(anonymous)->get("/version");
  ASSERT_FALSE(denied.isOk());
  EXPECT_THAT(denied.error().describe(), HasSubstr("received: 407 (proxy " + proxy.url() +
                                                   " (kubeconfig proxy-url)): the proxy wants credentials"));
}

// HTTPS_PROXY from the environment, without proxy-url: the server's name, api.internal, resolves
// nowhere but in the test proxy, so an answer proves the request went through it. NO_PROXY naming
// the server sends it direct instead (and so it fails, and the proxy sees nothing).
TEST_F(StubTest, TheEnvironmentsProxyIsUsedUnlessNoProxyNamesTheServer) {
  const TlsMaterial tls = TlsMaterial::generate(dir_, "DNS:api.internal");
  startStub(json::array({rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.31.0"}}}}}))}),
            tls.serverCert, tls.serverKey);
  ConnectProxy proxy;
  ClientConfig cfg = config("https");
  cfg.server = "https://api.internal:" + std::to_string(stub_->port());
  cfg.caData = readFile(tls.caCert);
  cfg.requestTimeout = 5s;
  ProxyEnvironment env;
  env.httpsProxy = "127.0.0.1:" + std::to_string(proxy.port());  // no scheme: http://, as in Go
  env.httpsProxyVar = "HTTPS_PROXY";
  env.noProxy = "10.0.0.0/8,.cluster.local";
  auto transport = makeCpprestTransport(cfg, env);
  ASSERT_TRUE(transport.isOk()) << transport.error();
  auto ok = Client(cfg, std::move(transport).value(), systemClock()).get("/version");
  ASSERT_TRUE(ok.isOk()) << ok.error().describe();
  EXPECT_THAT(proxy.requestLines(), ElementsAre("CONNECT api.internal:" + std::to_string(stub_->port()) + " HTTP/1.1"));

  env.noProxy = "10.0.0.0/8,api.internal";
  auto direct = makeCpprestTransport(cfg, env);
  ASSERT_TRUE(direct.isOk()) << direct.error();
  auto r = Client(cfg, std::move(direct).value(), systemClock()).get("/version");
  EXPECT_FALSE(r.isOk()) << "api.internal resolves only through the proxy";
  EXPECT_EQ(proxy.requestLines().size(), 1u);
}

// SNI is the name verified, and never an IP address (RFC 6066 has no IP names; Go sends none),
// where cpprestsdk sends the URL's host, an IP included: an IP tls-server-name is verified against
// the IP SANs and sends none.
TEST_F(StubTest, SniIsTheNameVerifiedAndNeverAnIp) {
  const TlsMaterial tls = TlsMaterial::generate(dir_, "IP:127.0.0.1,DNS:localhost", "kdesched-test-server");
  startStub(json::array({rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.31.0"}}}}}))}),
            tls.serverCert, tls.serverKey);
  ClientConfig byName = config("https");
  byName.server = "https://localhost:" + std::to_string(stub_->port());
  byName.caData = readFile(tls.caCert);
  ClientConfig byIpName = byName;
  byIpName.tlsServerName = "127.0.0.1";
  ClientConfig byIp = config("https");
  byIp.caData = byName.caData;
  for (const ClientConfig* cfg : {&byName, &byIpName, &byIp}) {
    auto ok = client(*cfg)->get("/version");
    ASSERT_TRUE(ok.isOk()) << cfg->server << " " << cfg->tlsServerName << ": " << ok.error().describe();
  }
  auto seen = client(byIp)->get("/__stub/requests");
  ASSERT_TRUE(seen.isOk()) << seen.error().describe();
  std::vector<std::string> sni;
  for (const auto& req : json::parse(seen->body))
    sni.push_back(req["sni"].is_null() ? "(none)" : req["sni"].get<std::string>());
  EXPECT_THAT(sni, ElementsAre("localhost", "(none)", "(none)"));
}

// tls-server-name: a certificate naming only api.internal, reached at 127.0.0.1. Without it, the
// existing refusal; with it, verified against api.internal and api.internal sent as SNI, directly
// and through a proxy (where cpprestsdk makes the TLS object only after the CONNECT). Its CN is
// no address either, so cpprestsdk's own check of the URL's host (which reads the CN) would refuse
// it: the name check must be ours alone.
TEST_F(StubTest, TlsServerNameIsVerifiedAndSentAsSni) {
  const TlsMaterial tls = TlsMaterial::generate(dir_, "DNS:api.internal", "kdesched-test-server");
  startStub(json::array({rule("/version", json::object(), json::array({{{"json", {{"gitVersion", "v1.31.0"}}}}}))}),
            tls.serverCert, tls.serverKey);
  ClientConfig cfg = config("https");
  cfg.caData = readFile(tls.caCert);
  auto refused = client(cfg)->get("/version");
  ASSERT_FALSE(refused.isOk());
  EXPECT_THAT(refused.error().describe(),
              HasSubstr("the API server's certificate is not issued for \"127.0.0.1\" (it names DNS:api.internal)"));

  cfg.tlsServerName = "api.internal";
  auto ok = client(cfg)->get("/version");
  ASSERT_TRUE(ok.isOk()) << ok.error().describe();
  ConnectProxy proxy;
  ClientConfig proxied = cfg;
  proxied.proxyUrl = proxy.url();
  auto tunnelled = client(proxied)->get("/version");
  ASSERT_TRUE(tunnelled.isOk()) << tunnelled.error().describe();
  EXPECT_EQ(proxy.requestLines().size(), 1u);

  auto seen = client(cfg)->get("/__stub/requests");
  ASSERT_TRUE(seen.isOk()) << seen.error().describe();
  std::vector<std::string> sni;
  for (const auto& req : json::parse(seen->body))
    sni.push_back(req["sni"].is_null() ? "" : req["sni"].get<std::string>());
  EXPECT_THAT(sni, ElementsAre("api.internal", "api.internal")) << "direct, then tunnelled";

  ClientConfig wrongName = cfg;
  wrongName.tlsServerName = "api.other";
  auto wrong = client(wrongName)->get("/version");
  ASSERT_FALSE(wrong.isOk());
  EXPECT_THAT(wrong.error().describe(),
              HasSubstr("not issued for \"api.other\" (tls-server-name) (it names DNS:api.internal)"));
}

}  // namespace
}  // namespace kdesched::kube::testing
