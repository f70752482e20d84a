// Clients that misbehave on purpose, for the metrics server's bounds: a plain TCP socket that
// sends what the test says (part of a head, a head too large, nothing) and waits for the server's
// answer or close with a deadline, so a server that never closes fails the test instead of
// hanging it; and a TLS client that keeps its connection open between requests.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>

namespace kdesched::metrics::testing {

class RawClient {
 public:
  // Connected when the constructor returns (the kernel's handshake; the server may not have
  // accepted yet). `receiveBuffer` > 0 shrinks the socket's receive buffer first.
  explicit RawClient(int port, int receiveBuffer = 0) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (receiveBuffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof receiveBuffer);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<unsigned short>(port));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }

  // False once the server closed or reset the connection.
  bool send(const std::string& bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  // What arrives until the server closes, up to `limit` in all. "" with timedOut() when nothing
  // ended the wait.
  std::string readUntilClosed(std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    std::string out;
    setReceiveTimeout(limit);
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        out.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      timedOut_ = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      return out;
    }
  }

  // One response's bytes, read until `marker` (the end of a known body) arrives or the deadline.
  std::string readUntil(const std::string& marker, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    std::string out;
    setReceiveTimeout(limit);
    char buf[4096];
    while (out.find(marker) == std::string::npos) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

  bool timedOut() const { return timedOut_; }

 private:
  void setReceiveTimeout(std::chrono::milliseconds limit) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(limit.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((limit.count() % 1000) * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

  int fd_;
  bool connected_ = false;
  bool timedOut_ = false;
};

// A scraper that keeps its connection: requests over TLS, the connection left open and idle in
// between, as Prometheus keeps one per target between scrapes.
class KeepAliveScraper {
 public:
  explicit KeepAliveScraper(int port) : ctx_(boost::asio::ssl::context::tls_client), stream_(io_, ctx_) {
    ctx_.set_verify_mode(boost::asio::ssl::verify_none);
    stream_.lowest_layer().connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    stream_.handshake(boost::asio::ssl::stream_base::client);
  }
  // The status line and headers of a GET of `path` (the body of the small endpoints too).
  std::string get(const std::string& path) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
    boost::asio::write(stream_, boost::asio::buffer(request));
    char buf[512];
    const std::size_t n = stream_.read_some(boost::asio::buffer(buf));
    return std::string(buf, n);
  }
  // True when the server closes the connection within `limit` (what it sent before is skipped).
  bool closedByServer(std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(limit.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((limit.count() % 1000) * 1000);
    ::setsockopt(stream_.lowest_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    boost::system::error_code ec;
    char buf[4096];
    while (!ec) stream_.read_some(boost::asio::buffer(buf), ec);  // the rest of an answer first
    return ec != boost::asio::error::would_block && ec != boost::asio::error::try_again;
  }

 private:
  boost::asio::io_context io_;
  boost::asio::ssl::context ctx_;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
};

// This process's resident set, in KiB (VmRSS).
inline long residentKiB() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
    status.ignore(4096, '\n');
  }
  return -1;
}

}  // namespace kdesched::metrics::testing
