#include "pkg/metrics/server.h"

#include <cpprest/http_listener.h>
#include <openssl/ssl.h>

#include "pkg/base/log.h"

namespace kdesched::metrics {

namespace http = web::http;
using http::experimental::listener::http_listener;

namespace {

// The client may be gone already: a failed reply is only logged.
void replyInternalError(const http::http_request& req) {
  try {
    req.reply(http::status_codes::InternalError, "internal error");
  } catch (const std::exception& e) {
    log::warn("cannot answer a metrics or probe request", {{"error", e.what()}});
  }
}

}  // namespace

struct Server::Impl {
  Metrics* metrics;
  std::function<Readiness()> readiness;
  std::unique_ptr<http_listener> listener;

  void handle(const http::http_request& req) {
    std::string path = req.relative_uri().path();
    if (path == "/healthz" || path == "/livez") {
      req.reply(http::status_codes::OK, "ok");
    } else if (path == "/readyz") {
      Readiness r = readiness ? readiness() : Readiness{true, "ok"};
      req.reply(r.ready ? http::status_codes::OK : http::status_codes::ServiceUnavailable,
                r.reason.empty() ? (r.ready ? "ok" : "not ready") : r.reason);
    } else if (path == "/metrics" && metrics) {
      http::http_response resp(http::status_codes::OK);
      resp.set_body(metrics->serialize(), "text/plain; version=0.0.4; charset=utf-8");
      req.reply(resp);
    } else {
      req.reply(http::status_codes::NotFound, "not found");
    }
  }
};

Server::Server(Metrics* metrics, std::function<Readiness()> readiness) : impl_(std::make_unique<Impl>()) {
  impl_->metrics = metrics;
  impl_->readiness = std::move(readiness);
}

Server::~Server() { stop(); }

Status Server::start(const std::string& bindAddress, int port, const TlsOptions& tls, Clock::WallTime now) {
  const std::string where = bindAddress + ":" + std::to_string(port);
  std::string host = bindAddress.find(':') != std::string::npos ? "[" + bindAddress + "]" : bindAddress;
  std::string url = (tls.plainHttp ? "http://" : "https://") + host + ":" + std::to_string(port);
  http::experimental::listener::http_listener_config config;
  if (!tls.plainHttp) {
    auto minVersion = tlsMinVersion(tls.minVersion);
    if (!minVersion) return minVersion.status();
    const bool unspecified = bindAddress.empty() || bindAddress == "0.0.0.0" || bindAddress == "::";
    auto pair = servingCertificate(tls, unspecified ? "localhost" : bindAddress, now);
    if (!pair) return Status::error("cannot serve metrics on " + where + ": " + pair.error());
    config.set_ssl_context_callback([pair = *pair, version = *minVersion](boost::asio::ssl::context& ctx) {
      ctx.set_options(boost::asio::ssl::context::default_workarounds | boost::asio::ssl::context::no_sslv2 |
                      boost::asio::ssl::context::no_sslv3);
      SSL_CTX_set_min_proto_version(ctx.native_handle(), version);
      ctx.use_certificate_chain(boost::asio::buffer(pair.certificatePem));
      ctx.use_private_key(boost::asio::buffer(pair.privateKeyPem), boost::asio::ssl::context::pem);
    });
  }
  try {
    impl_->listener = std::make_unique<http_listener>(url, config);
    impl_->listener->support(http::methods::GET, [impl = impl_.get()](const http::http_request& req) {
      try {
        impl->handle(req);
      } catch (const std::exception& e) {
        log::warn("cannot answer a metrics or probe request",
                  {{"path", req.relative_uri().path()}, {"error", e.what()}});
        replyInternalError(req);
      }
    });
    impl_->listener->open().wait();
  } catch (const std::exception& e) {
    impl_->listener.reset();
    return Status::error("cannot serve metrics on " + where + ": " + e.what() +
                         " (is another process using the port? set --secure-port, or 0 to disable)");
  }
  return Status::ok();
}

void Server::stop() {
  if (!impl_ || !impl_->listener) return;
  try {
    impl_->listener->close().wait();
  } catch (const std::exception& e) {
    // Stopping anyway: the listener goes with the process.
    log::warn("cannot close the metrics server cleanly", {{"error", e.what()}});
  }
  impl_->listener.reset();
}

}  // namespace kdesched::metrics
