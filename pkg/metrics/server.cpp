#include "pkg/metrics/server.h"

#include <future>

#include <cpprest/http_listener.h>
#include <fmt/format.h>
#include <openssl/ssl.h>

#include "pkg/base/log.h"
#include "pkg/metrics/cert_reloader.h"

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

namespace {

// Checked when a connection arrives, at most this often: a renewed certificate is served within a
// second of being written (upstream watches the files and also polls once a minute).
constexpr std::chrono::seconds kCertificateCheckInterval{1};

Result<std::shared_ptr<CertificateReloader>> certificates(const TlsOptions& tls, const std::string& bindAddress,
                                                          const std::shared_ptr<Clock>& clock) {
  if (tls.certFile.empty() != tls.keyFile.empty())
    return Status::error("--tls-cert-file and --tls-private-key-file go together: give both or neither");
  if (!tls.certFile.empty())
    return CertificateReloader::fromFiles(tls.certFile, tls.keyFile, clock, kCertificateCheckInterval);
  const bool unspecified = bindAddress.empty() || bindAddress == "0.0.0.0" || bindAddress == "::";
  auto pair = selfSignedCertificate(unspecified ? "localhost" : bindAddress, clock->wallNow());
  if (!pair) return pair.status();
  return std::make_shared<CertificateReloader>(std::move(*pair));
}

}  // namespace

Status Server::start(const std::string& bindAddress, int port, const TlsOptions& tls, std::shared_ptr<Clock> clock) {
  const std::string where = bindAddress + ":" + std::to_string(port);
  std::string host = bindAddress.find(':') != std::string::npos ? "[" + bindAddress + "]" : bindAddress;
  std::string url = (tls.plainHttp ? "http://" : "https://") + host + ":" + std::to_string(port);
  http::experimental::listener::http_listener_config config;
  if (!tls.plainHttp) {
    auto minVersion = tlsMinVersion(tls.minVersion);
    if (!minVersion) return minVersion.status();
    auto ciphers = tlsCipherSuites(tls.cipherSuites);
    if (!ciphers) return ciphers.status();
    if (!ciphers->unavailable.empty())
      log::warn("skipping TLS cipher suites this OpenSSL does not offer",
                {{"suites", fmt::format("{}", fmt::join(ciphers->unavailable, ","))}, {"flag", "--tls-cipher-suites"}});
    int floor = *minVersion;
    if (!ciphers->tls12Possible && floor < TLS1_3_VERSION) {
      log::warn("--tls-cipher-suites leaves no TLS 1.0-1.2 suite: serving TLS 1.3 only",
                {{"suites", fmt::format("{}", fmt::join(tls.cipherSuites, ","))}});
      floor = TLS1_3_VERSION;
    }
    auto source = certificates(tls, bindAddress, clock);
    if (!source) return Status::error("cannot serve metrics on " + where + ": " + source.error());
    // Runs for every accepted connection (cpprestsdk makes one SSL context per connection), so the
    // pair served is the reloader's current one.
    config.set_ssl_context_callback([source = *source, floor, list = ciphers->openssl](boost::asio::ssl::context& ctx) {
      const std::shared_ptr<const CertificatePair> pair = source->current();
      ctx.set_options(boost::asio::ssl::context::default_workarounds | boost::asio::ssl::context::no_sslv2 |
                      boost::asio::ssl::context::no_sslv3);
      SSL_CTX_set_min_proto_version(ctx.native_handle(), floor);
      if (!list.empty()) SSL_CTX_set_cipher_list(ctx.native_handle(), list.c_str());
      ctx.use_certificate_chain(boost::asio::buffer(pair->certificatePem));
      ctx.use_private_key(boost::asio::buffer(pair->privateKeyPem), boost::asio::ssl::context::pem);
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

bool Server::stop(std::chrono::milliseconds limit) {
  if (!impl_ || !impl_->listener) return true;
  // cpprestsdk's close() completes only when every open connection has ended, which an idle HTTPS
  // keep-alive connection never does by itself.
  auto closed = std::make_shared<std::promise<void>>();
  std::future<void> done = closed->get_future();
  try {
    impl_->listener->close().then([closed](pplx::task<void> t) {
      try {
        t.get();
      } catch (const std::exception& e) {
        log::warn("cannot close the metrics server cleanly", {{"error", e.what()}});
      }
      closed->set_value();
    });
  } catch (const std::exception& e) {
    log::warn("cannot close the metrics server cleanly", {{"error", e.what()}});
    closed->set_value();
  }
  if (done.wait_for(limit) == std::future_status::timeout) {
    log::warn("metrics server connections still open at shutdown; leaving them to the process exit",
              {{"waited_ms", limit.count()}});
    // Destroying the listener would wait for the same connections.
    static_cast<void>(impl_->listener.release());
    return false;
  }
  impl_->listener.reset();
  return true;
}

}  // namespace kdesched::metrics
