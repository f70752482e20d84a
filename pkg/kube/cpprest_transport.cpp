#include "pkg/kube/cpprest_transport.h"

#include <arpa/inet.h>
#include <cpprest/http_client.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pplx/threadpool.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>

#include "pkg/base/log.h"

namespace kdesched::kube {
namespace {

namespace http = web::http;
namespace client = web::http::client;

// Runs a cpprestsdk/Boost call and turns whatever it throws into a message: nothing escapes the
// module, and a blocking .get() on a failed task is the normal way failures surface.
template <typename F>
Status guarded(const char* what, F&& f) {
  try {
    f();
    return Status::ok();
  } catch (const http::http_exception& e) {
    return Status::error(std::string(what) + ": " + e.what());
  } catch (const pplx::task_canceled&) {
    return Status::error(std::string(what) + ": cancelled");
  } catch (const std::exception& e) {
    return Status::error(std::string(what) + ": " + e.what());
  } catch (...) {
    return Status::error(std::string(what) + ": unknown error");
  }
}

Headers copyHeaders(const http::http_headers& in) {
  Headers out;
  for (const auto& [k, v] : in) out.emplace_back(k, v);
  return out;
}

http::http_request buildRequest(const HttpRequest& r) {
  http::http_request req(http::method(r.method));
  req.set_request_uri(r.target);
  for (const auto& [k, v] : r.headers) {
    if (k == "Content-Type") continue;  // set with the body below; cpprest would otherwise add its own
    req.headers().add(k, v);
  }
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    std::string type = findHeader(r.headers, "Content-Type");
    if (type.empty()) type = "application/json";
    req.set_body(r.body, type);
  }
  return req;
}

// Cancels a cpprestsdk request when the caller's Cancellation fires. The token source is a shared
// handle, so the callback stays valid even if it runs after the request finished.
struct RequestCancel {
  pplx::cancellation_token_source cts;
  CancelSubscription sub;
  explicit RequestCancel(Cancellation* c, pplx::cancellation_token_source source = {})
      : cts(source), sub(c, [source]() mutable { source.cancel(); }) {}
};

class CpprestLineStream final : public LineStream {
 public:
  CpprestLineStream(std::shared_ptr<client::http_client> owner, http::http_response response,
                    std::unique_ptr<RequestCancel> cancel)
      : owner_(std::move(owner)),
        response_(std::move(response)),
        cancel_(std::move(cancel)),
        body_(response_.body().streambuf()) {}

  ~CpprestLineStream() override {
    // Close the connection rather than drain a watch that may run for minutes.
    cancel();
  }

  // Lines and frames are taken from buffer_ at start_, not erased from its front: an erase per
  // event moved the rest of the chunk read (up to 64 KB) for every watch event. readMore()
  // compacts once the consumed part is at least half the buffer, so each byte moves at most once.
  bool next(std::string& line) override {
    for (;;) {
      const auto nl = buffer_.find('\n', std::max(scanned_, start_));
      if (nl != std::string::npos) {
        std::size_t end = nl;
        if (end > start_ && buffer_[end - 1] == '\r') --end;
        line.assign(buffer_, start_, end - start_);
        start_ = scanned_ = nl + 1;
        return true;
      }
      scanned_ = buffer_.size();
      if (ended_) {
        // A last line without a newline at a clean end is still a line; after an error it is a
        // fragment and is dropped.
        if (start_ < buffer_.size() && status_.isOk()) {
          line.assign(buffer_, start_, std::string::npos);
          clear();
          return true;
        }
        return false;
      }
      if (buffer_.size() - start_ > kMaxLine) {
        finish(Status::error("a watch line exceeds " + std::to_string(kMaxLine) + " bytes"));
        continue;
      }
      readMore();
    }
  }

  bool read(std::size_t n, std::string& out) override {
    while (buffer_.size() - start_ < n && !ended_) readMore();
    if (buffer_.size() - start_ < n) {
      out.assign(buffer_, start_, std::string::npos);
      clear();
      return false;
    }
    out.assign(buffer_, start_, n);
    start_ = scanned_ = start_ + n;
    return true;
  }

  void cancel() override {
    cancelled_.store(true);
    cancel_->cts.cancel();
  }

  Status status() const override { return status_; }

 private:
  static constexpr std::size_t kChunk = 64 * 1024;
  static constexpr std::size_t kMaxLine = 64 * 1024 * 1024;

  void clear() {
    buffer_.clear();
    start_ = scanned_ = 0;
  }

  // Drops the consumed front of buffer_ once it is at least half of it (all of it: no move).
  void compact() {
    if (start_ == 0 || start_ < buffer_.size() - start_) return;
    buffer_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }

  void readMore() {
    compact();
    std::size_t got = 0;
    Status st = guarded("reading the watch stream", [&] {
      // Wait for at least one byte, then take whatever else already arrived.
      const std::size_t want = std::clamp<std::size_t>(body_.in_avail(), 1, kChunk);
      chunk_.resize(want);
      got = body_.getn(chunk_.data(), want).get();
    });
    if (!st.isOk()) {
      finish(cancelled_.load() ? Status::error("cancelled") : st);
      return;
    }
    if (got > 0) {
      buffer_.append(reinterpret_cast<const char*>(chunk_.data()), got);
      return;
    }
    // End of body: content_ready() tells a complete chunked body from a cut connection.
    Status done = guarded("watch stream", [&] { response_.content_ready().get(); });
    if (cancelled_.load()) done = Status::error("cancelled");
    finish(done);
  }

  void finish(Status st) {
    ended_ = true;
    status_ = std::move(st);
  }

  std::shared_ptr<client::http_client> owner_;  // keeps the connection's client alive
  http::http_response response_;
  std::unique_ptr<RequestCancel> cancel_;
  concurrency::streams::streambuf<uint8_t> body_;
  std::vector<uint8_t> chunk_;
  std::string buffer_;
  std::size_t start_ = 0;    // where the unread part of buffer_ begins
  std::size_t scanned_ = 0;  // buffer_[start_, scanned_) is known to hold no newline
  bool ended_ = false;
  Status status_;
  std::atomic<bool> cancelled_{false};
};

// Reads a whole body into `out`, with room for the padding the JSON decoder wants so it does not
// reallocate. Each getn() returns what has arrived (often one HTTP chunk, a few KB), so it reads
// into a fixed buffer and appends: resizing `out` by the request size before each read would
// zero-fill 256 KB per few KB received.
void readBody(http::http_response& response, std::string& out) {
  constexpr std::size_t kChunk = 256 * 1024;
  constexpr std::size_t kPadding = 64;
  const std::size_t length = response.headers().content_length();
  // LIST pages come chunked (no Content-Length) and alike in size: reserving what the thread's
  // last body needed, plus an eighth, avoids growing by doubling (a 2 MB page briefly held 6 MB).
  thread_local std::size_t lastBody = 0;
  out.reserve(length > 0 ? length + kPadding : std::max(kChunk, lastBody + lastBody / 8 + kPadding));
  thread_local std::vector<uint8_t> chunk(kChunk);
  concurrency::streams::streambuf<uint8_t> body = response.body().streambuf();
  for (;;) {
    const std::size_t got = body.getn(chunk.data(), kChunk).get();
    if (got == 0) break;
    out.append(reinterpret_cast<const char*>(chunk.data()), got);
  }
  lastBody = out.size();
  // Rethrows what ended the body early (a reset connection, a timeout).
  response.content_ready().get();
}

// cpprestsdk runs its I/O and continuations on one asio thread pool, 40 threads by default. Every
// HTTP chunk of a response body (a few KB) wakes one of them, and 40 threads taking turns on 2
// cores made reading a 30,000-pod LIST cost 420,000 context switches and more kernel than user
// time. Our own threads do all the blocking (.get()); the pool only runs short handlers, so one
// thread is enough: measured on that LIST, 19,000 switches and 1.5 s CPU (2 threads: 100,000 and
// 1.9 s; 40 threads: 425,000 and 4.6 s). Must happen before cpprestsdk first uses the pool; later
// calls change nothing.
void sizeThreadPool() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      crossplat::threadpool::initialize_with_threads(1);
    } catch (const std::exception&) {
      // Already initialized (some other code used cpprestsdk first): keep its size.
    }
  });
}

// The cluster's CA and the client certificate, parsed once.
class TlsMaterial {
 public:
  TlsMaterial(const std::string& ca, const std::string& cert, const std::string& key) {
    if (!ca.empty()) {
      store_ = X509_STORE_new();
      for (X509* c : readCertificates(ca)) {
        X509_STORE_add_cert(store_, c);
        X509_free(c);
      }
    }
    if (!cert.empty()) {
      chain_ = readCertificates(cert);
      BIO* bio = BIO_new_mem_buf(key.data(), static_cast<int>(key.size()));
      key_ = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
      BIO_free(bio);
    }
  }
  ~TlsMaterial() {
    if (store_) X509_STORE_free(store_);
    for (X509* c : chain_) X509_free(c);
    if (key_) EVP_PKEY_free(key_);
  }
  TlsMaterial(const TlsMaterial&) = delete;
  TlsMaterial& operator=(const TlsMaterial&) = delete;

  void apply(SSL_CTX* ctx) const {
    // Only the cluster's CA: cpprestsdk preloads the system roots, which do not issue API server
    // certificates and would widen whom we trust.
    if (store_) SSL_CTX_set1_cert_store(ctx, store_);
    if (!chain_.empty() && key_) {
      SSL_CTX_use_certificate(ctx, chain_.front());
      for (std::size_t i = 1; i < chain_.size(); ++i) SSL_CTX_add1_chain_cert(ctx, chain_[i]);
      SSL_CTX_use_PrivateKey(ctx, key_);
    }
  }

 private:
  static std::vector<X509*> readCertificates(const std::string& pem) {
    std::vector<X509*> out;
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    while (X509* c = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) out.push_back(c);
    ERR_clear_error();  // the end of the PEM data reads as an error
    BIO_free(bio);
    return out;
  }

  X509_STORE* store_ = nullptr;
  std::vector<X509*> chain_;
  EVP_PKEY* key_ = nullptr;
};

// The API server's certificate check, and why it failed. OpenSSL verifies the chain; the host
// name is checked here as Go's client checks it: against the subjectAltNames only. cpprestsdk's
// own check (Boost's RFC 2818 one) falls back to the subject's CN, so a certificate issued for
// api.example.com with CN=10.0.0.1 passed for 10.0.0.1, which client-go refuses. And cpprestsdk
// reports any failure as "Error in SSL handshake", dropping the reason the operator needs: a
// certificate from another CA, or one issued for another name.
class VerifyFailures {
 public:
  // `serverName`: the kubeconfig's tls-server-name, which replaces the URL's host when set.
  VerifyFailures(std::string host, std::string serverName)
      : host_(serverName.empty() ? std::move(host) : serverName),
        label_(serverName.empty() ? "" : " (tls-server-name)") {
    if (host_.size() > 2 && host_.front() == '[' && host_.back() == ']') host_ = host_.substr(1, host_.size() - 2);
  }

  // SSL_CTX_set_cert_verify_callback's signature.
  static int verify(X509_STORE_CTX* ctx, void* arg) {
    auto* self = static_cast<VerifyFailures*>(arg);
    // cpprestsdk's per-certificate callback checks the URL's host (or the Host header) with
    // Boost's RFC 2818 rules; the name check is ours alone, so that tls-server-name can replace
    // that host. OpenSSL's chain checks stay as they are.
    X509_STORE_CTX_set_verify_cb(ctx, [](int preverified, X509_STORE_CTX*) { return preverified; });
    int ok = X509_verify_cert(ctx);
    if (ok > 0 && !self->namesHost(X509_STORE_CTX_get0_cert(ctx))) {
      X509_STORE_CTX_set_error(ctx, X509_V_ERR_HOSTNAME_MISMATCH);
      ok = 0;
    }
    if (ok <= 0) self->record(ctx);
    return ok;
  }

  std::string last() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }

 private:
  // An IP address against the IP SANs, a name against the DNS SANs (wildcards as RFC 6125 allows).
  bool namesHost(X509* cert) const {
    if (!cert) return false;
    const int ip = X509_check_ip_asc(cert, host_.c_str(), 0);
    if (ip >= 0) return ip == 1;  // -2: not an IP address
    return X509_check_host(cert, host_.data(), host_.size(), X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, nullptr) == 1;
  }

  void record(X509_STORE_CTX* ctx) {
    const int err = X509_STORE_CTX_get_error(ctx);
    X509* leaf = X509_STORE_CTX_get0_cert(ctx);
    std::string why;
    if (err == X509_V_ERR_HOSTNAME_MISMATCH || err == X509_V_OK) {
      why = "the API server's certificate is not issued for \"" + host_ + "\"" + label_ + " (it names " +
            namesOf(leaf) +
            (label_.empty() ? "): connect to an address the certificate names, or have it reissued for this one"
                            : "): set tls-server-name to a name the certificate holds, or have it reissued");
    } else {
      why = "the API server's certificate (" + namesOf(leaf) +
            ") failed verification: " + X509_verify_cert_error_string(err) +
            ": is it signed by the certificate authority the kubeconfig names (certificate-authority, "
            "certificate-authority-data; in a pod, the service account's ca.crt)?";
    }
    std::lock_guard<std::mutex> lock(mu_);
    last_ = std::move(why);
  }

  // "DNS:api.example.com, IP Address:10.0.0.1", else the subject.
  static std::string namesOf(X509* cert) {
    if (!cert) return "no certificate";
    std::string out;
    BIO* bio = BIO_new(BIO_s_mem());
    const int at = X509_get_ext_by_NID(cert, NID_subject_alt_name, -1);
    if (bio && at >= 0 && X509V3_EXT_print(bio, X509_get_ext(cert, at), 0, 0) == 1) {
      char* data = nullptr;
      const long n = BIO_get_mem_data(bio, &data);
      out.assign(data, static_cast<std::size_t>(std::max(n, 0L)));
    } else if (bio && X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_ONELINE) >= 0) {
      char* data = nullptr;
      const long n = BIO_get_mem_data(bio, &data);
      out = "subject " + std::string(data, static_cast<std::size_t>(std::max(n, 0L)));
    }
    if (bio) BIO_free(bio);
    return out.empty() ? "no names" : out;
  }

  std::string host_;
  std::string label_;
  mutable std::mutex mu_;
  std::string last_;
};

// "api.example.com" from "https://api.example.com:6443/prefix" ("[::1]" keeps its brackets).
std::string hostOf(const std::string& server) {
  std::size_t begin = server.find("://");
  begin = begin == std::string::npos ? 0 : begin + 3;
  const std::size_t end = server[begin] == '[' ? server.find(']', begin) + 1 : server.find_first_of(":/", begin);
  return server.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// SNI: tls-server-name when set, else the URL's host. cpprestsdk can only name the URL's host (or
// the Host header, which would also change what the server is sent), sends an IP address too, and
// sets it on the connection's SSL object just before the handshake, where no callback of ours
// reaches; through a proxy that object exists only after the CONNECT. The context, though, is ours
// first (set_ssl_context_callback), and its info callback runs at the start of every handshake,
// before the ClientHello is written: there the name is set. cpprestsdk's own SNI is off, so there
// is one writer. An IP address is not sent (RFC 6066 has no IP names), as Go does not send one.
class ServerNameIndication {
 public:
  explicit ServerNameIndication(std::string name) : name_(std::move(name)) {}

  void apply(SSL_CTX* ctx) const {
    SSL_CTX_set_ex_data(ctx, index(), const_cast<ServerNameIndication*>(this));
    SSL_CTX_set_info_callback(ctx, &ServerNameIndication::onInfo);
  }

  static bool sendable(const std::string& name) {
    unsigned char buf[16];
    return !name.empty() && inet_pton(AF_INET, name.c_str(), buf) != 1 && inet_pton(AF_INET6, name.c_str(), buf) != 1;
  }

 private:
  static int index() {
    static const int i = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return i;
  }

  // OpenSSL passes the SSL object as const to info callbacks; it is the connection's own, mutable
  // object, and setting the host name before the ClientHello is what the API is for.
  static void onInfo(const SSL* ssl, int where, int /*ret*/) {
    if (!(where & SSL_CB_HANDSHAKE_START)) return;
    const auto* self = static_cast<const ServerNameIndication*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), index()));
    if (self && sendable(self->name_)) SSL_set_tlsext_host_name(const_cast<SSL*>(ssl), self->name_.c_str());
  }

  std::string name_;
};

std::string unbracketed(const std::string& host) {
  return host.size() > 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
}

// cpprestsdk's asio client goes through an http:// proxy (CONNECT for an https server, the absolute
// URI for an http one) when the config names one, and never reads the environment itself. Its
// proxy port defaults to 0 when the URL has none, so the URL given always carries the port.
web::web_proxy webProxy(const ProxyUrl& proxy) {
  web::web_proxy out{web::uri(proxy.withoutUserinfo())};
  if (proxy.hasUserinfo) out.set_credentials(web::credentials(proxy.user, proxy.password));
  return out;
}

// cpprestsdk loads the system's default CA bundle into every new connection's TLS context before
// our callback replaces the store with the cluster's CA: ~140 certificates parsed per connection,
// two thirds of a small one-shot run's CPU. With a cluster CA the system roots are never used, so
// point OpenSSL's default file at nothing (X509_STORE_set_default_paths ignores a file without
// certificates). Called before any connection exists.
void skipSystemRoots() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("SSL_CERT_FILE", "/dev/null", 1); });
}

class CpprestTransport final : public Transport {
 public:
  static constexpr int kUnsentRetries = 16;

  CpprestTransport(const ClientConfig& config, const ProxyChoice& proxy)
      : server_(config.server),
        proxyShown_(proxy.proxy ? proxy.describe() : ""),
        verifyFailures_(std::make_shared<VerifyFailures>(hostOf(config.server), config.tlsServerName)) {
    sizeThreadPool();
    base_.set_validate_certificates(!config.insecureSkipTlsVerify);
    if (proxy.proxy) base_.set_proxy(webProxy(*proxy.proxy));
    auto sni = std::make_shared<const ServerNameIndication>(
        config.tlsServerName.empty() ? unbracketed(hostOf(config.server)) : config.tlsServerName);
    base_.set_tlsext_sni_enabled(false);
    std::shared_ptr<TlsMaterial> tls;
    if (!config.caData.empty() || !config.clientCertData.empty()) {
      // Parsed once (the material was validated when the transport was made), then shared with
      // every connection's TLS context: cpprestsdk makes a new one per connection, and parsing
      // PEM with OpenSSL 3's decoders costs milliseconds each time.
      tls = std::make_shared<TlsMaterial>(config.caData, config.clientCertData, config.clientKeyData);
      if (!config.caData.empty()) skipSystemRoots();
    }
    const std::shared_ptr<VerifyFailures> failures = config.insecureSkipTlsVerify ? nullptr : verifyFailures_;
    // Runs for every new connection; errors cannot be thrown from here, so they are left to
    // fail the handshake.
    base_.set_ssl_context_callback([tls, failures, sni](boost::asio::ssl::context& ctx) {
      if (tls) tls->apply(ctx.native_handle());
      sni->apply(ctx.native_handle());
      if (failures) SSL_CTX_set_cert_verify_callback(ctx.native_handle(), &VerifyFailures::verify, failures.get());
    });
  }

  Result<HttpResponse> send(const HttpRequest& request) override {
    std::shared_ptr<client::http_client> http;
    if (Status s = clientFor(request.timeout, http); !s.isOk()) return s;
    for (int attempt = 0;; ++attempt) {
      RequestCancel cancel(request.cancel);
      HttpResponse out;
      Status st = guarded(request.method.c_str(), [&] {
        http::http_response response = http->request(buildRequest(request), cancel.cts.get_token()).get();
        out.status = response.status_code();
        out.reason = response.reason_phrase();
        out.headers = copyHeaders(response.headers());
        readBody(response, out.body);
      });
      if (st.isOk()) return out;
      if (request.cancel && request.cancel->cancelled()) return Status::error("cancelled");
      // cpprestsdk keeps idle connections in a pool without noticing that the server closed one
      // meanwhile (an API server restart, an idle timeout on the way); it sends again itself only
      // when reading the answer fails, not when writing the request does. A server cannot have
      // acted on a request it did not receive whole, so it goes again on the next connection, as
      // Go's net/http retries a request on a reused connection it could not write. Bounded by
      // how many connections the pool may hold (kdesched has ~10 requests in flight at most).
      if (attempt < kUnsentRetries && st.message().find("Failed to write request") != std::string::npos) {
        log::debug("kube request not sent on a pooled connection, sending it again",
                   {{"method", request.method}, {"target", request.target}, {"error", st.message()}});
        continue;
      }
      return explain(st);
    }
  }

  Result<StreamResponse> openWatch(const HttpRequest& request) override {
    // A client per watch: its timeout is the watch's, and a watch holds its connection for minutes
    // anyway, so there is nothing to pool.
    std::shared_ptr<client::http_client> http;
    if (Status s = makeClient(request.timeout, http); !s.isOk()) return s;
    auto cancel = std::make_unique<RequestCancel>(request.cancel);
    StreamResponse out;
    http::http_response response;
    Status st = guarded("opening the watch",
                        [&] { response = http->request(buildRequest(request), cancel->cts.get_token()).get(); });
    if (!st.isOk()) {
      if (request.cancel && request.cancel->cancelled()) return Status::error("cancelled");
      return explain(st);
    }
    out.status = response.status_code();
    out.reason = response.reason_phrase();
    out.headers = copyHeaders(response.headers());
    out.lines = std::make_unique<CpprestLineStream>(std::move(http), std::move(response), std::move(cancel));
    return out;
  }

 private:
  // A failed handshake with the reason the certificate was refused, when it was.
  // A failure at the proxy with the proxy's name (cpprestsdk only says "proxy"), and what a 407 wants.
  Status explain(const Status& st) const {
    const std::string& m = st.message();
    if (!proxyShown_.empty() && m.find("proxy") != std::string::npos) {
      std::string out = m + " (proxy " + proxyShown_ + ")";
      if (m.find("received: 407") != std::string::npos) {
        out +=
            ": the proxy wants credentials: give them in the proxy URL, http://USER:PASSWORD@HOST:PORT "
            "(percent-encode special characters)";
      }
      return Status::error(out);
    }
    if (m.find("handshake") == std::string::npos) return st;
    const std::string why = verifyFailures_->last();
    return why.empty() ? st : Status::error(m + ": " + why);
  }

  Status makeClient(std::chrono::seconds timeout, std::shared_ptr<client::http_client>& out) {
    client::http_client_config cfg = base_;
    cfg.set_timeout(timeout);
    return guarded("creating the HTTP client", [&] { out = std::make_shared<client::http_client>(server_, cfg); });
  }

  // Plain requests share a client (and its connection pool) per timeout value.
  Status clientFor(std::chrono::seconds timeout, std::shared_ptr<client::http_client>& out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = clients_.find(timeout);
    if (it != clients_.end()) {
      out = it->second;
      return Status::ok();
    }
    if (Status s = makeClient(timeout, out); !s.isOk()) return s;
    clients_.emplace(timeout, out);
    return Status::ok();
  }

  std::string server_;
  std::string proxyShown_;  // empty: direct
  std::shared_ptr<VerifyFailures> verifyFailures_;
  client::http_client_config base_;
  std::mutex mu_;
  std::map<std::chrono::seconds, std::shared_ptr<client::http_client>> clients_;
};

}  // namespace

Result<std::unique_ptr<Transport>> makeCpprestTransport(const ClientConfig& config) {
  return makeCpprestTransport(config, ProxyEnvironment::fromProcess());
}

Result<std::unique_ptr<Transport>> makeCpprestTransport(const ClientConfig& config, const ProxyEnvironment& env) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return Status::error("server \"" + config.server + "\" must start with https:// or http://");
  }
  auto proxy = chooseProxy(config.server, config.proxyUrl, env);
  if (!proxy.isOk()) return proxy.status();
  if (!config.caData.empty()) {
    if (Status s = checkPemCertificates(config.caData); !s.isOk())
      return Status::error("certificate authority: " + s.message());
  }
  if (config.clientCertData.empty() != config.clientKeyData.empty()) {
    return Status::error("a client certificate needs its key, and a key its certificate");
  }
  if (!config.clientCertData.empty()) {
    if (Status s = checkPemCertificates(config.clientCertData); !s.isOk())
      return Status::error("client certificate: " + s.message());
    if (Status s = checkPemPrivateKey(config.clientKeyData); !s.isOk())
      return Status::error("client key: " + s.message());
  }
  if (config.insecureSkipTlsVerify && config.server.rfind("https://", 0) == 0) {
    log::warn("the API server's certificate is not verified (insecure-skip-tls-verify in the kubeconfig)",
              {{"server", config.server},
               {"hint",
                "anyone on the path to the API server can pose as it and read kdesched's credentials; set "
                "certificate-authority-data instead"}});
  }
  std::unique_ptr<Transport> out;
  Status st = guarded("creating the HTTP transport", [&] { out = std::make_unique<CpprestTransport>(config, *proxy); });
  if (!st.isOk()) return st;
  return out;
}

}  // namespace kdesched::kube
