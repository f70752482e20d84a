// A tiny HTTP CONNECT proxy for tests, on 127.0.0.1: it records each request's head (the CONNECT
// line and its headers), opens a TCP connection to the named port on 127.0.0.1 (whatever the host:
// so a name only "the proxy" can resolve shows the request went through it), answers 200 and
// pipes bytes both ways until either side closes. Anything but CONNECT gets 405; a CONNECT without
// the Proxy-Authorization line the proxy was made to require gets 407. Written here
// rather than run as a real proxy so the unit tests need nothing outside Debian's build
// dependencies; it does exactly what cpprestsdk's tunnel needs and no more.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kdesched::kube::testing {

class ConnectProxy {
 public:
  // `requiredAuth`: a header line ("Proxy-Authorization: Basic ...") every CONNECT must carry.
  explicit ConnectProxy(std::string requiredAuth = "") : requiredAuth_(std::move(requiredAuth)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listener_, 16) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("the test proxy cannot listen");
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { acceptLoop(); });
  }
  ~ConnectProxy() {
    stop_ = true;
    acceptor_.join();
    std::vector<std::thread> workers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      workers.swap(workers_);
    }
    for (auto& t : workers) t.join();
    ::close(listener_);
  }
  ConnectProxy(const ConnectProxy&) = delete;
  ConnectProxy& operator=(const ConnectProxy&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // Each request's head as received: "CONNECT host:port HTTP/1.1\r\nHost: ...\r\n...".
  std::vector<std::string> heads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return heads_;
  }
  // Just the request lines.
  std::vector<std::string> requestLines() const {
    std::vector<std::string> out;
    for (const std::string& h : heads()) out.push_back(h.substr(0, h.find("\r\n")));
    return out;
  }

 private:
  static constexpr int kPollMs = 20;

  void acceptLoop() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, kPollMs) <= 0) continue;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      workers_.emplace_back([this, client] {
        serve(client);
        ::close(client);
      });
    }
  }

  // The request head, one byte at a time so nothing of the tunnelled bytes is read here.
  bool readHead(int fd, std::string& head) {
    char c;
    while (head.size() < 16384 && head.find("\r\n\r\n") == std::string::npos) {
      pollfd p{fd, POLLIN, 0};
      if (stop_) return false;
      if (::poll(&p, 1, kPollMs) <= 0) continue;
      if (::read(fd, &c, 1) != 1) return false;
      head.push_back(c);
    }
    return head.find("\r\n\r\n") != std::string::npos;
  }

  void serve(int client) {
    std::string head;
    if (!readHead(client, head)) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      heads_.push_back(head);
    }
    const std::string line = head.substr(0, head.find("\r\n"));
    const auto target = line.rfind("CONNECT ", 0) == 0 ? line.substr(8, line.find(' ', 8) - 8) : std::string();
    const auto colon = target.rfind(':');
    if (target.empty() || colon == std::string::npos) {
      reply(client, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    if (!requiredAuth_.empty() && head.find("\r\n" + requiredAuth_ + "\r\n") == std::string::npos) {
      reply(client,
            "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
    if (upstream < 0 || ::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      reply(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      if (upstream >= 0) ::close(upstream);
      return;
    }
    reply(client, "HTTP/1.1 200 Connection established\r\n\r\n");
    pipe(client, upstream);
    ::close(upstream);
  }

  void pipe(int a, int b) {
    char buf[16384];
    while (!stop_) {
      pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      if (::poll(p, 2, kPollMs) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
        if (n <= 0 || !writeAll(p[1 - i].fd, buf, static_cast<std::size_t>(n))) return;
      }
    }
  }

  static bool writeAll(int fd, const char* data, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      data += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  static void reply(int fd, const std::string& text) { writeAll(fd, text.data(), text.size()); }

  std::string requiredAuth_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<std::string> heads_;
};

}  // namespace kdesched::kube::testing
