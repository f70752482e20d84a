#include "pkg/metrics/server.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <future>
#include <optional>
#include <thread>

#include "pkg/base/log.h"
#include "pkg/metrics/cert_reloader.h"
#include "pkg/metrics/http_connection.h"

namespace kdesched::metrics {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Checked when a connection arrives, at most this often: a renewed certificate is served within a
// second of being written (upstream watches the files and also polls once a minute).
constexpr std::chrono::seconds kCertificateCheckInterval{1};
// After a failed accept (out of file descriptors, most likely), before the next.
constexpr std::chrono::milliseconds kAcceptRetry{100};
// The limit's warning is repeated at most this often while connections are being shed.
constexpr std::chrono::seconds kShedLogInterval{60};

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

// One OpenSSL context per certificate pair, made when the reloader first serves that pair; each
// connection keeps the context it started with.
class TlsContexts {
 public:
  TlsContexts(std::shared_ptr<CertificateReloader> source, int floor, std::string ciphers)
      : source_(std::move(source)), floor_(floor), ciphers_(std::move(ciphers)) {}

  // The context for the pair served now. A pair that OpenSSL refuses (the reloader checked it
  // already, so hardly ever) is logged and the previous context kept.
  Result<std::shared_ptr<asio::ssl::context>> current() {
    std::shared_ptr<const CertificatePair> pair = source_->current();
    if (pair == pair_ && context_) return context_;
    try {
      context_ = make(*pair);
      pair_ = std::move(pair);
    } catch (const std::exception& e) {
      if (!context_) return Status::error(std::string("the serving certificate does not load: ") + e.what());
      log::warn("cannot use the renewed serving certificate; serving the previous one", {{"error", e.what()}});
      pair_ = std::move(pair);
    }
    return context_;
  }

 private:
  std::shared_ptr<asio::ssl::context> make(const CertificatePair& pair) const {
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), floor_);
    // An idle keep-alive connection gives its read and write buffers back.
    SSL_CTX_set_mode(ctx->native_handle(), SSL_MODE_RELEASE_BUFFERS);
    if (!ciphers_.empty()) SSL_CTX_set_cipher_list(ctx->native_handle(), ciphers_.c_str());
    ctx->use_certificate_chain(asio::buffer(pair.certificatePem));
    ctx->use_private_key(asio::buffer(pair.privateKeyPem), asio::ssl::context::pem);
    return ctx;
  }

  std::shared_ptr<CertificateReloader> source_;
  int floor_;
  std::string ciphers_;
  std::shared_ptr<const CertificatePair> pair_;
  std::shared_ptr<asio::ssl::context> context_;
};

// The TLS settings from the flags, or an error naming the flag.
Result<std::unique_ptr<TlsContexts>> tlsContexts(const TlsOptions& tls, const std::string& bindAddress,
                                                 const std::shared_ptr<Clock>& clock, const std::string& where) {
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
  auto contexts = std::make_unique<TlsContexts>(*source, floor, ciphers->openssl);
  if (auto first = contexts->current(); !first)
    return Status::error("cannot serve metrics on " + where + ": " + first.error());
  return contexts;
}

// The endpoint to listen on: an IP address as upstream's flag takes, or a name resolved here (as
// the listener before took it); "::" listens on IPv4 too, as Go's listener does.
Result<tcp::endpoint> endpointOf(asio::io_context& io, const std::string& bindAddress, int port) {
  if (port < 0 || port > 65535) return Status::error("--secure-port " + std::to_string(port) + " is not a port");
  const std::string host = bindAddress.empty() ? "0.0.0.0" : bindAddress;
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, static_cast<unsigned short>(port));
  tcp::resolver resolver(io);
  const auto found =
      resolver.resolve(host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty())
    return Status::error("--bind-address \"" + bindAddress + "\" is not an IP address and does not resolve (" +
                         (ec ? ec.message() : "no address") + ")");
  return found.begin()->endpoint();
}

}  // namespace

struct Server::Impl {
  Impl(Metrics* m, std::function<Readiness()> r, ServerLimits l)
      : metrics(m), readiness(std::move(r)), table(l.maxConnections, m) {
    context.limits = l;
    context.metrics = m;
    context.table = &table;
    context.route = [this](const std::string& path) { return route(path); };
  }

  Metrics* metrics;
  std::function<Readiness()> readiness;
  std::shared_ptr<Clock> clock;
  // Declared before the io_context: the connections its handlers hold use them when destroyed.
  detail::ConnectionTable table;
  detail::ServingContext context;
  std::unique_ptr<TlsContexts> tls;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  std::thread thread;
  std::future<void> ended;
  std::uint64_t shedSinceLog = 0;
  std::optional<Clock::TimePoint> lastShedLog;

  detail::Reply route(const std::string& path) const;
  void accept();
  void admit(tcp::socket socket);
  void shed();
  void run();
};

detail::Reply Server::Impl::route(const std::string& path) const {
  try {
    if (path == "/healthz" || path == "/livez") return {200, "ok"};
    if (path == "/readyz") {
      Readiness r = readiness ? readiness() : Readiness{true, "ok"};
      return {r.ready ? 200u : 503u, r.reason.empty() ? (r.ready ? "ok" : "not ready") : r.reason};
    }
    if (path == "/metrics" && metrics) return {200, metrics->serialize(), "text/plain; version=0.0.4; charset=utf-8"};
    return {404, "not found"};
  } catch (const std::exception& e) {
    log::warn("cannot answer a metrics or probe request", {{"path", path}, {"error", e.what()}});
    return {500, "internal error"};
  }
}

void Server::Impl::accept() {
  acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (ec) {
      log::warn("cannot accept a metrics or probe connection", {{"error", ec.message()}});
      retry.expires_after(kAcceptRetry);
      retry.async_wait([this](const boost::system::error_code& waited) {
        if (!waited) accept();
      });
      return;
    }
    admit(std::move(socket));
    accept();
  });
}

void Server::Impl::admit(tcp::socket socket) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  std::shared_ptr<detail::Connection> c;
  if (tls) {
    auto ctx = tls->current();
    if (!ctx) return;
    c = detail::makeTlsConnection(std::move(socket), std::move(*ctx), context);
  } else {
    c = detail::makePlainConnection(std::move(socket), context);
  }
  const detail::ConnectionTable::Admission a = table.admit(c);
  if (a != detail::ConnectionTable::Admission::Admitted) shed();
  if (a != detail::ConnectionTable::Admission::Refused) c->start();
}

// A warning when the limit is first reached, then at most once per interval with the count.
void Server::Impl::shed() {
  ++shedSinceLog;
  const Clock::TimePoint now = clock->now();
  if (lastShedLog && now - *lastShedLog < kShedLogInterval) return;
  log::warn("metrics server at its connection limit: closing the longest-waiting connections",
            {{"limit", context.limits.maxConnections},
             {"closed", shedSinceLog},
             {"metric", "kdesched_http_connections_shed_total"}});
  lastShedLog = now;
  shedSinceLog = 0;
}

void Server::Impl::run() {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      log::error("metrics server handler failed; serving on", {{"error", e.what()}});
    }
  }
}

Server::Server(Metrics* metrics, std::function<Readiness()> readiness, ServerLimits limits)
    : impl_(std::make_unique<Impl>(metrics, std::move(readiness), limits)) {}

Server::~Server() { stop(); }

Status Server::start(const std::string& bindAddress, int port, const TlsOptions& tls, std::shared_ptr<Clock> clock) {
  if (impl_->thread.joinable()) return Status::error("the metrics server is already started");
  const std::string where = bindAddress + ":" + std::to_string(port);
  impl_->clock = clock;
  if (!tls.plainHttp) {
    auto contexts = tlsContexts(tls, bindAddress, clock, where);
    if (!contexts) return contexts.status();
    impl_->tls = std::move(*contexts);
  }
  auto endpoint = endpointOf(impl_->io, bindAddress, port);
  if (!endpoint) return Status::error("cannot serve metrics on " + where + ": " + endpoint.error());
  boost::system::error_code ec;
  tcp::acceptor& a = impl_->acceptor;
  a.open(endpoint->protocol(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && endpoint->address().is_v6()) a.set_option(asio::ip::v6_only(false), ec);
  if (!ec) a.bind(*endpoint, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    a.close(ignored);
    return Status::error("cannot serve metrics on " + where + ": " + ec.message() +
                         " (is another process using the port? set --secure-port, or 0 to disable)");
  }
  impl_->accept();
  std::promise<void> ended;
  impl_->ended = ended.get_future();
  impl_->thread = std::thread([impl = impl_.get(), ended = std::move(ended)]() mutable {
    impl->run();
    ended.set_value();
  });
  return Status::ok();
}

bool Server::stop(std::chrono::milliseconds limit) {
  if (!impl_ || !impl_->thread.joinable()) return true;
  Impl* impl = impl_.get();
  asio::post(impl->io, [impl] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
    impl->retry.cancel();
    impl->table.closeAll();
  });
  // With the acceptor and every socket closed, the io_context runs out of work and the thread ends.
  if (impl->ended.wait_for(limit) == std::future_status::timeout) {
    impl->io.stop();
    if (impl->ended.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout) {
      log::warn("metrics server thread still busy at shutdown; leaving it to the process exit",
                {{"waited_ms", limit.count()}});
      impl->thread.detach();
      static_cast<void>(impl_.release());  // the thread still uses it
      return false;
    }
  }
  impl->thread.join();
  return true;
}

}  // namespace kdesched::metrics
