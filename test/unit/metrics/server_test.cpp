#include "pkg/metrics/server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <pplx/threadpool.h>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

#include "test/unit/metrics/serving.h"

namespace kdesched::metrics {
namespace {

using testing::freePort;
using testing::testClock;
namespace asio = boost::asio;

// A scraper that keeps its connection: one request answered over TLS, then the connection left
// open and idle, as Prometheus keeps one per target between scrapes.
class KeepAliveScraper {
 public:
  explicit KeepAliveScraper(int port) : ctx_(asio::ssl::context::tls_client), stream_(io_, ctx_) {
    ctx_.set_verify_mode(asio::ssl::verify_none);
    stream_.lowest_layer().connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    stream_.handshake(asio::ssl::stream_base::client);
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
    asio::write(stream_, asio::buffer(request));
    char buf[256];
    std::size_t n = stream_.read_some(asio::buffer(buf));
    statusLine_.assign(buf, n);
  }
  const std::string& statusLine() const { return statusLine_; }
  void close() {
    boost::system::error_code ignored;
    stream_.lowest_layer().close(ignored);
  }

 private:
  asio::io_context io_;
  asio::ssl::context ctx_;
  asio::ssl::stream<asio::ip::tcp::socket> stream_;
  std::string statusLine_;
};

// The kubelet's SIGTERM on a rollout: the process must exit within the grace period even while
// Prometheus holds a connection. Before the bound, stop() never returned (the close waits on the
// pool's one thread). Run in a child process: a stop() that hangs is ended by SIGALRM there, and
// the test fails instead of hanging.
TEST(ServerDeathTest, StopDoesNotWaitForAnIdleKeepAliveConnection) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::alarm(20);
        // As the daemon runs it (pkg/kube/cpprest_transport.cpp): cpprestsdk's pool with one
        // thread. Only here: the child runs this test alone, before anything used the pool.
        crossplat::threadpool::initialize_with_threads(1);
        Metrics m("0.1.0", {});
        Server s(&m, nullptr);
        const int port = freePort();
        if (!s.start("127.0.0.1", port, TlsOptions{}, testClock()).isOk()) std::_Exit(2);
        KeepAliveScraper scraper(port);
        if (scraper.statusLine().rfind("HTTP/1.1 200", 0) != 0) std::_Exit(3);
        // False: the connection is still open, so the process must leave by std::_Exit.
        std::_Exit(s.stop(std::chrono::milliseconds(200)) ? 4 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Server, StopWithoutConnectionsFreesThePort) {
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

}  // namespace
}  // namespace kdesched::metrics
