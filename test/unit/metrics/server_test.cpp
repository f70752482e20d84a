// The metrics server's bounds: whatever a client sends or withholds costs bounded memory and time,
// the connection limit leaves room for a probe, and stop() closes everything at once.
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
using ::testing::HasSubstr;
using testing::KeepAliveScraper;
using testing::RawClient;
using ::testing::StartsWith;
using testing::testClock;
using Steady = std::chrono::steady_clock;

constexpr milliseconds kShort{200};

TlsOptions plain() {
  TlsOptions t;
  t.plainHttp = true;
  return t;
}

// Short deadlines, so a test waits a fifth of a second where the daemon waits seconds.
ServerLimits shortLimits() {
  ServerLimits l;
  l.headerTimeout = kShort;
  l.idleTimeout = kShort;
  l.handshakeTimeout = kShort;
  l.writeTimeout = kShort;
  return l;
}

// A server on a free loopback port, plain HTTP unless `tls`.
struct Served {
  explicit Served(ServerLimits limits = {}, bool tls = false) : server(&metrics, nullptr, limits) {
    ok = server.start("127.0.0.1", port, tls ? TlsOptions{} : plain(), testClock()).isOk();
  }
  // A series once the server has stopped: a deadline closes the socket first and is counted by
  // the handler that runs next on the server's thread, so a client can see the close before the
  // count; stop() joins that thread, which runs every handler already due before it ends.
  double countAfterStop(const std::string& series) {
    server.stop();
    const std::string text = metrics.serialize();
    const std::size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
  }
  Metrics metrics{"0.1.0", {}};
  int port = freePort();
  Server server;
  bool ok = false;
};

const std::string kHealthz = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

TEST(ServerBounds, AHeadOverTheBoundGets431AndTheConnectionClosed) {
  Served s;
  ASSERT_TRUE(s.ok);
  RawClient c(s.port);
  ASSERT_TRUE(c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(17 * 1024, 'a') + "\r\n\r\n"));
  const std::string answer = c.readUntilClosed();
  EXPECT_FALSE(c.timedOut()) << "the connection is closed after the answer";
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 431 "));
  EXPECT_EQ(s.countAfterStop("kdesched_http_rejections_total{reason=\"header-too-large\"}"), 1);
}

TEST(ServerBounds, TooManyHeaderFieldsGet431) {
  ServerLimits l;
  l.maxHeaderFields = 8;
  Served s(l);
  ASSERT_TRUE(s.ok);
  std::string head = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 9; ++i) head += "X-" + std::to_string(i) + ": v\r\n";
  RawClient c(s.port);
  ASSERT_TRUE(c.send(head + "\r\n"));
  EXPECT_THAT(c.readUntilClosed(), StartsWith("HTTP/1.1 431 "));
}

// One client sending a header as fast as it can, without end: the server reads at most the bound
// (plus a short linger), answers and closes; the process does not grow with what was sent.
TEST(ServerBounds, AnEndlessHeadIsCutOffAndMemoryDoesNotGrow) {
  Served s;
  ASSERT_TRUE(s.ok);
  const long before = testing::residentKiB();
  RawClient c(s.port);
  ASSERT_TRUE(c.send("GET /healthz HTTP/1.1\r\nX-Endless: "));
  const std::string chunk(64 * 1024, 'a');
  std::size_t sent = 0;
  constexpr std::size_t kOffered = 256u << 20;
  while (sent < kOffered && c.send(chunk)) sent += chunk.size();
  const long after = testing::residentKiB();
  EXPECT_LT(sent, kOffered) << "the server never closed the connection";
  EXPECT_LT(after - before, 16 * 1024) << "RSS grew from " << before << " KiB to " << after << " KiB";
  EXPECT_EQ(s.countAfterStop("kdesched_http_rejections_total{reason=\"header-too-large\"}"), 1);
}

// A slowloris: part of a head, then nothing; or a head dribbled a byte at a time. Either is closed
// when the head's deadline passes, counted from its first byte, not from the last.
TEST(ServerBounds, AHeadNotFinishedInTimeIsClosed) {
  Served s(shortLimits());
  ASSERT_TRUE(s.ok);
  RawClient stalled(s.port);
  const Steady::time_point t0 = Steady::now();
  ASSERT_TRUE(stalled.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  EXPECT_EQ(stalled.readUntilClosed(), "");
  EXPECT_FALSE(stalled.timedOut()) << "not closed within 5 s";
  const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - t0);
  EXPECT_GE(took, kShort - milliseconds(20));
  EXPECT_LT(took, milliseconds(2000));

  RawClient dribbler(s.port);
  const std::string head = kHealthz.substr(0, kHealthz.size() - 2);
  const Steady::time_point t1 = Steady::now();
  bool open = true;
  for (std::size_t i = 0; open && i < head.size(); ++i) {
    open = dribbler.send(head.substr(i, 1));
    std::this_thread::sleep_for(milliseconds(20));  // the attack's pace, not a synchronisation
  }
  EXPECT_FALSE(open) << "a head dribbled over " << head.size() * 20 << " ms was still read";
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(Steady::now() - t1), milliseconds(2000));
  EXPECT_EQ(s.countAfterStop("kdesched_http_rejections_total{reason=\"head-timeout\"}"), 2);
}

TEST(ServerBounds, ATlsHandshakeNotFinishedInTimeIsClosed) {
  Served s(shortLimits(), /*tls=*/true);
  ASSERT_TRUE(s.ok);
  RawClient silent(s.port);
  EXPECT_EQ(silent.readUntilClosed(), "");
  EXPECT_FALSE(silent.timedOut());
  EXPECT_EQ(s.countAfterStop("kdesched_http_rejections_total{reason=\"handshake-timeout\"}"), 1);
}

TEST(ServerBounds, AnIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  Served s(shortLimits());
  ASSERT_TRUE(s.ok);
  RawClient c(s.port);
  ASSERT_TRUE(c.send(kHealthz));
  const std::string answer = c.readUntilClosed();
  EXPECT_FALSE(c.timedOut());
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 "));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\nok"));
}

TEST(ServerBounds, OnlyABodilessGetIsServed) {
  Served s;
  ASSERT_TRUE(s.ok);
  RawClient post(s.port);
  ASSERT_TRUE(post.send("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
  const std::string refused = post.readUntilClosed();
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(refused, HasSubstr("Allow: GET"));
  RawClient body(s.port);
  ASSERT_TRUE(body.send("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"));
  EXPECT_THAT(body.readUntilClosed(), StartsWith("HTTP/1.1 413 "));
  RawClient chunked(s.port);
  ASSERT_TRUE(chunked.send("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"));
  EXPECT_THAT(chunked.readUntilClosed(), StartsWith("HTTP/1.1 413 "));
  RawClient junk(s.port);
  ASSERT_TRUE(junk.send("NOT HTTP AT ALL\r\n\r\n"));
  EXPECT_THAT(junk.readUntilClosed(), StartsWith("HTTP/1.1 400 "));
}

// Two requests in one write (pipelined) get two answers in order.
TEST(ServerBounds, PipelinedRequestsAreAnsweredInOrder) {
  Served s;
  ASSERT_TRUE(s.ok);
  RawClient c(s.port);
  ASSERT_TRUE(c.send(kHealthz + "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string both = c.readUntilClosed();
  const std::size_t second = both.find("HTTP/1.1 404 ");
  EXPECT_THAT(both, StartsWith("HTTP/1.1 200 "));
  EXPECT_NE(second, std::string::npos) << both;
}

}  // namespace
}  // namespace kdesched::metrics
