// Helpers for the tests of the metrics endpoint: a free loopback port and a GET over HTTP or
// HTTPS (the server's certificate is self-signed, so HTTPS does not verify it).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include <cpprest/http_client.h>

#include "pkg/base/clock.h"

namespace kdesched::metrics::testing {

// 2026-11-30T..., fixed: it stamps self-signed certificates.
inline const Clock::WallTime kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1796000000));

inline int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// `tune` may restrict the client's TLS (to test the server's protocol floor).
inline std::pair<int, std::string> get(const std::string& scheme, int port, const std::string& path,
                                       std::function<void(boost::asio::ssl::context&)> tune = nullptr) {
  web::http::client::http_client_config config;
  config.set_validate_certificates(false);
  config.set_timeout(std::chrono::seconds(5));
  if (tune) config.set_ssl_context_callback(std::move(tune));
  web::http::client::http_client c(scheme + "://127.0.0.1:" + std::to_string(port), config);
  auto resp = c.request(web::http::methods::GET, path).get();
  return {resp.status_code(), resp.extract_string().get()};
}

}  // namespace kdesched::metrics::testing
