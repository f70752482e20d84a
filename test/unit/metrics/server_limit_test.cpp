// The metrics server's connection limit and its shutdown: connections that hold a slot without
// sending a request give way to new ones (a kubelet probe opens one each time), a client that did
// send requests keeps its slot while such connections exist, and stop() closes every connection
// at once, keep-alive ones too.
#include "pkg/metrics/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "test/unit/metrics/raw_client.h"
#include "test/unit/metrics/serving.h"

namespace kdesched::metrics {
namespace {

using std::chrono::milliseconds;
using testing::freePort;
using testing::KeepAliveScraper;
using testing::RawClient;
using ::testing::StartsWith;
using testing::testClock;
using Steady = std::chrono::steady_clock;

TlsOptions plain() {
  TlsOptions t;
  t.plainHttp = true;
  return t;
}

double sample(const Metrics& m, const std::string& series) {
  const std::string text = m.serialize();
  const std::size_t at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

const std::string kHealthz = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
const std::string kPartialHead = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";

TEST(ServerLimit, NewConnectionsTakeTheSlotsOfTheLongestWaitingWhileAServedClientKeepsItsSlot) {
  Metrics m("0.1.0", {});
  ServerLimits l;
  l.maxConnections = 4;
  Server s(&m, nullptr, l);
  const int port = freePort();
  ASSERT_TRUE(s.start("127.0.0.1", port, plain(), testClock()).isOk());

  RawClient scraper(port);
  ASSERT_TRUE(scraper.send(kHealthz));
  ASSERT_THAT(scraper.readUntil("\r\n\r\nok"), StartsWith("HTTP/1.1 200 "));
  // Three slowloris connections fill the other slots; five more arrive, each closing the one
  // that has waited longest: the first three, then the first two of the newcomers.
  std::vector<std::unique_ptr<RawClient>> loris;
  for (int i = 0; i < 8; ++i) {
    loris.push_back(std::make_unique<RawClient>(port));
    ASSERT_TRUE(loris.back()->send(kPartialHead));
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(loris[i]->readUntilClosed(), "") << "connection " << i;
    EXPECT_FALSE(loris[i]->timedOut()) << "connection " << i << " still open";
  }
  // The scraper's slot was kept: its next request on the same connection is answered.
  ASSERT_TRUE(scraper.send(kHealthz));
  EXPECT_THAT(scraper.readUntil("\r\n\r\nok"), StartsWith("HTTP/1.1 200 "));
  // A probe's new connection gets a slot too (another slowloris gives way) and its answer.
  RawClient probe(port);
  ASSERT_TRUE(probe.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  EXPECT_THAT(probe.readUntilClosed(), StartsWith("HTTP/1.1 200 "));
  EXPECT_EQ(loris[5]->readUntilClosed(), "");
  EXPECT_FALSE(loris[5]->timedOut());
  EXPECT_EQ(sample(m, "kdesched_http_connections_shed_total{victim=\"waiting\"}"), 6);
  EXPECT_EQ(sample(m, "kdesched_http_connections_shed_total{victim=\"idle\"}"), 0);
  EXPECT_TRUE(s.stop());
}

// Every slot answering (clients that stopped reading a large /metrics): the new connection is the
// one closed, at once.
TEST(ServerLimit, WithEverySlotAnsweringTheNewConnectionIsClosed) {
  Metrics m("0.1.0", {});
  auto& big = prometheus::BuildGauge().Name("test_padding").Help("makes /metrics large").Register(*m.registry());
  for (int i = 0; i < 40000; ++i) big.Add({{"series", std::string(40, 'x') + std::to_string(i)}});
  ServerLimits l;
  l.maxConnections = 2;
  Server s(&m, nullptr, l);
  const int port = freePort();
  ASSERT_TRUE(s.start("127.0.0.1", port, plain(), testClock()).isOk());
  std::vector<std::unique_ptr<RawClient>> stalled;
  for (int i = 0; i < 2; ++i) {
    stalled.push_back(std::make_unique<RawClient>(port, /*receiveBuffer=*/4096));
    ASSERT_TRUE(stalled.back()->send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
    // The answer has begun: the server writes it until the client reads again.
    ASSERT_THAT(stalled.back()->readUntil("HTTP/1.1 200 "), StartsWith("HTTP/1.1 200 "));
  }
  RawClient refused(port);
  ASSERT_TRUE(refused.connected());
  EXPECT_EQ(refused.readUntilClosed(), "");
  EXPECT_FALSE(refused.timedOut());
  EXPECT_EQ(sample(m, "kdesched_http_connections_shed_total{victim=\"new\"}"), 1);
  EXPECT_TRUE(s.stop());
}

// The kubelet's SIGTERM on a rollout: the process must exit within the grace period even while
// Prometheus holds a connection (before, stop() waited for it and the process hung at exit).
TEST(ServerLimit, StopClosesIdleKeepAliveAndHalfOpenConnectionsAtOnce) {
  Metrics m("0.1.0", {});
  Server s(&m, nullptr);
  const int port = freePort();
  ASSERT_TRUE(s.start("127.0.0.1", port, TlsOptions{}, testClock()).isOk());
  std::vector<std::unique_ptr<KeepAliveScraper>> scrapers;
  for (int i = 0; i < 3; ++i) {
    scrapers.push_back(std::make_unique<KeepAliveScraper>(port));
    ASSERT_THAT(scrapers.back()->get("/metrics"), StartsWith("HTTP/1.1 200 "));
  }
  RawClient halfOpen(port);
  ASSERT_TRUE(halfOpen.send("\x16\x03\x01"));  // the start of a TLS record, then nothing
  const Steady::time_point t0 = Steady::now();
  EXPECT_TRUE(s.stop(milliseconds(2000)));
  const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - t0);
  EXPECT_LT(took, milliseconds(500));
  for (auto& scraper : scrapers) EXPECT_TRUE(scraper->closedByServer());
  EXPECT_EQ(halfOpen.readUntilClosed(milliseconds(2000)), "");
  EXPECT_FALSE(halfOpen.timedOut());
  Server again(&m, nullptr);
  EXPECT_TRUE(again.start("127.0.0.1", port, TlsOptions{}, testClock()).isOk()) << "the port is free again";
}

TEST(ServerLimit, StopWithoutConnectionsFreesThePort) {
  Metrics m("0.1.0", {});
  int port = freePort();
  {
    Server s(&m, nullptr);
    ASSERT_TRUE(s.start("127.0.0.1", port, TlsOptions{}, testClock()).isOk());
    EXPECT_TRUE(s.stop());
  }
  Server again(&m, nullptr);
  EXPECT_TRUE(again.start("127.0.0.1", port, TlsOptions{}, testClock()).isOk());
}

TEST(ServerLimit, ABadBindAddressIsAClearError) {
  Metrics m("0.1.0", {});
  Server s(&m, nullptr);
  const Status st = s.start("no-such-host.invalid", freePort(), plain(), testClock());
  ASSERT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), ::testing::HasSubstr("cannot serve metrics on no-such-host.invalid:"));
  EXPECT_THAT(st.message(), ::testing::HasSubstr("--bind-address"));
}

}  // namespace
}  // namespace kdesched::metrics
