#include "pkg/metrics/http_connection.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>

namespace kdesched::metrics::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

Connection::~Connection() {
  if (ctx_.table) ctx_.table->remove(this);
}

void Connection::enter(Phase p) {
  phase_ = p;
  since_ = ctx_.table ? ctx_.table->tick() : 0;
}

namespace {

// After an error response the client may still be sending (a head far over the bound). Closing
// with unread bytes resets the connection, and the reset can overtake the response; so what comes
// is read and dropped, for a short while and up to a bound, before the close.
constexpr std::chrono::milliseconds kLinger{500};
constexpr std::size_t kLingerBytes = 256 * 1024;
// A keep-alive connection's wait for its next request reads at most this much; the head's own
// read follows with the head's deadline.
constexpr std::size_t kIdleRead = 1024;

// A request parser that keeps only what routing needs (method, target, keep-alive) and counts the
// header fields; a body is never read.
class HeadParser : public http::basic_parser<true> {
 public:
  HeadParser(std::size_t maxBytes, std::size_t maxFields) : maxFields_(maxFields) {
    header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(maxBytes, UINT32_MAX)));
    body_limit(0);  // a Content-Length above 0 ends the head with body_limit
  }
  http::verb method() const { return method_; }
  const std::string& target() const { return target_; }
  int version() const { return version_; }

 private:
  void on_request_impl(http::verb method, beast::string_view, beast::string_view target, int version,
                       beast::error_code&) override {
    method_ = method;
    target_.assign(target.data(), target.size());
    version_ = version;
  }
  void on_response_impl(int, beast::string_view, int, beast::error_code& ec) override { ec = http::error::bad_method; }
  void on_field_impl(http::field, beast::string_view, beast::string_view, beast::error_code& ec) override {
    if (++fields_ > maxFields_) ec = http::error::header_limit;
  }
  void on_header_impl(beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&, beast::error_code&) override {}
  std::size_t on_body_impl(beast::string_view body, beast::error_code&) override { return body.size(); }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code&) override {
    return body.size();
  }
  void on_finish_impl(beast::error_code&) override {}

  std::size_t maxFields_;
  std::size_t fields_ = 0;
  http::verb method_ = http::verb::unknown;
  std::string target_;
  int version_ = 11;
};

std::string pathOf(const std::string& target) { return target.substr(0, target.find('?')); }

bool endedByClient(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
         ec == asio::ssl::error::stream_truncated;
}

template <bool kTls>
class HttpConnection final : public Connection {
  using Stream = std::conditional_t<kTls, beast::ssl_stream<beast::tcp_stream>, beast::tcp_stream>;

 public:
  HttpConnection(tcp::socket socket, std::shared_ptr<asio::ssl::context> tls, ServingContext& ctx)
      : Connection(ctx),
        tls_(std::move(tls)),
        stream_(open(std::move(socket), tls_.get())),
        buffer_(ctx.limits.maxHeaderBytes + 1) {}

  void start() override {
    if constexpr (kTls) {
      enter(Phase::Handshake);
      lowest().expires_after(ctx_.limits.handshakeTimeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = self()](const beast::error_code& ec) { self->onHandshake(ec); });
    } else {
      readHead();
    }
  }

  void shed() override {
    shed_ = true;
    closeNow();
  }
  void close() override { closeNow(); }

 private:
  static Stream open(tcp::socket socket, asio::ssl::context* tls) {
    if constexpr (kTls)
      return Stream(std::move(socket), *tls);
    else
      return Stream(std::move(socket));
  }
  std::shared_ptr<HttpConnection> self() { return std::static_pointer_cast<HttpConnection>(shared_from_this()); }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  void rejected(const char* reason) {
    if (ctx_.metrics) ctx_.metrics->httpRejected(reason);
  }

  void onHandshake(const beast::error_code& ec) {
    if (shed_) return;  // closed by the limit: counted there, not the client's doing
    if (ec) {
      rejected(ec == beast::error::timeout ? "handshake-timeout" : "handshake-failed");
      closeNow();
      return;
    }
    readHead();
  }

  // The next request: at once when bytes of it are here (pipelined) or nothing was served yet,
  // else after waiting up to the idle timeout for its first bytes.
  void readHead() {
    if (buffer_.size() > 0 || !served()) {
      readWholeHead();
      return;
    }
    enter(Phase::Idle);
    lowest().expires_after(ctx_.limits.idleTimeout);
    stream_.async_read_some(buffer_.prepare(std::min(kIdleRead, buffer_.max_size())),
                            [self = self()](const beast::error_code& ec, std::size_t n) {
                              if (ec || self->shed_) {
                                self->closeNow();
                                return;
                              }
                              self->buffer_.commit(n);
                              self->readWholeHead();
                            });
  }

  void readWholeHead() {
    enter(Phase::Head);
    parser_.emplace(ctx_.limits.maxHeaderBytes, ctx_.limits.maxHeaderFields);
    lowest().expires_after(ctx_.limits.headerTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = self()](const beast::error_code& ec, std::size_t) { self->onHead(ec); });
  }

  void onHead(const beast::error_code& ec) {
    if (shed_) return;
    if (ec == beast::error::timeout) {
      rejected("head-timeout");
      closeNow();
    } else if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      rejected("header-too-large");
      respond({431, "request header fields too large\n"}, false);
    } else if (ec == http::error::body_limit) {
      rejected("body");
      respond({413, "no request body is accepted\n"}, false);
    } else if (ec &&
               (endedByClient(ec) || ec.category() != http::make_error_code(http::error::bad_target).category())) {
      closeNow();
    } else if (ec) {
      rejected("bad-request");
      respond({400, "bad request\n"}, false);
    } else {
      markServed();
      route();
    }
  }

  void route() {
    const HeadParser& p = *parser_;
    version_ = p.version();
    if (p.method() != http::verb::get) {
      rejected("method");
      respond({405, "only GET is served\n"}, false);
    } else if (p.chunked() || p.content_length().value_or(0) > 0) {
      rejected("body");
      respond({413, "no request body is accepted\n"}, false);
    } else {
      respond(ctx_.route(pathOf(p.target())), p.keep_alive());
    }
  }

  void respond(Reply reply, bool keepAlive) {
    enter(Phase::Responding);
    response_ = {};
    response_.version(version_ == 10 ? 10 : 11);
    response_.result(reply.status);
    response_.set(http::field::content_type, reply.contentType);
    if (reply.status == 405) response_.set(http::field::allow, "GET");
    response_.body() = std::move(reply.body);
    response_.keep_alive(keepAlive);
    response_.prepare_payload();
    lowest().expires_after(ctx_.limits.writeTimeout);
    http::async_write(stream_, response_, [self = self(), keepAlive](const beast::error_code& ec, std::size_t) {
      if (ec || self->shed_) {
        if (ec == beast::error::timeout) self->rejected("write-timeout");
        self->closeNow();
      } else if (!keepAlive) {
        self->closeGracefully();
      } else {
        self->response_ = {};  // its body (the metrics text) is not kept while idle
        self->readHead();
      }
    });
  }

  void closeGracefully() {
    enter(Phase::Closing);
    if constexpr (kTls) {
      lowest().expires_after(kLinger);
      stream_.async_shutdown([self = self()](const beast::error_code&) { self->drain(); });
    } else {
      drain();
    }
  }

  void drain() {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    buffer_.clear();
    lowest().expires_after(kLinger);
    dropRead();
  }

  void dropRead() {
    lowest().async_read_some(buffer_.prepare(std::min<std::size_t>(4096, buffer_.max_size())),
                             [self = self()](const beast::error_code& ec, std::size_t n) {
                               self->dropped_ += n;
                               if (ec || self->dropped_ >= kLingerBytes) {
                                 self->closeNow();
                                 return;
                               }
                               self->dropRead();
                             });
  }

  void closeNow() {
    enter(Phase::Closing);
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

  std::shared_ptr<asio::ssl::context> tls_;  // before stream_: the stream's SSL object comes from it
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<HeadParser> parser_;
  http::response<http::string_body> response_;
  int version_ = 11;
  std::size_t dropped_ = 0;
  bool shed_ = false;
};

}  // namespace

ConnectionTable::Admission ConnectionTable::admit(const std::shared_ptr<Connection>& c) {
  Admission result = Admission::Admitted;
  if (static_cast<int>(open_.size()) >= max_) {
    std::shared_ptr<Connection> v = victim();
    if (!v) {
      if (metrics_) metrics_->httpConnectionShed("new");
      return Admission::Refused;
    }
    if (v->phase() != Connection::Phase::Closing) {
      const bool idle = v->served();
      result = idle ? Admission::ClosedIdle : Admission::ClosedWaiting;
      if (metrics_) metrics_->httpConnectionShed(idle ? "idle" : "waiting");
    }
    remove(v.get());
    v->shed();
  }
  open_[c.get()] = c;
  if (metrics_) metrics_->httpOpenConnections(static_cast<double>(open_.size()));
  return result;
}

// Closing first (it is going anyway), then the longest waiting that never sent a whole request,
// then the longest waiting of those that did; never one that is answering.
std::shared_ptr<Connection> ConnectionTable::victim() const {
  std::shared_ptr<Connection> best;
  auto rank = [](const Connection& c) {
    if (c.phase() == Connection::Phase::Closing) return 0;
    if (c.phase() == Connection::Phase::Responding) return 3;
    return c.served() ? 2 : 1;
  };
  for (const auto& [ptr, weak] : open_) {
    std::shared_ptr<Connection> c = weak.lock();
    if (!c || rank(*c) == 3) continue;
    if (!best || rank(*c) < rank(*best) || (rank(*c) == rank(*best) && c->since() < best->since())) best = std::move(c);
  }
  return best;
}

void ConnectionTable::remove(const Connection* c) {
  if (open_.erase(c) > 0 && metrics_) metrics_->httpOpenConnections(static_cast<double>(open_.size()));
}

void ConnectionTable::closeAll() {
  std::map<const Connection*, std::weak_ptr<Connection>> all;
  all.swap(open_);
  for (auto& [ptr, weak] : all)
    if (std::shared_ptr<Connection> c = weak.lock()) c->close();
  if (metrics_) metrics_->httpOpenConnections(0);
}

std::shared_ptr<Connection> makePlainConnection(tcp::socket socket, ServingContext& ctx) {
  return std::make_shared<HttpConnection<false>>(std::move(socket), nullptr, ctx);
}

std::shared_ptr<Connection> makeTlsConnection(tcp::socket socket, std::shared_ptr<asio::ssl::context> tls,
                                              ServingContext& ctx) {
  return std::make_shared<HttpConnection<true>>(std::move(socket), std::move(tls), ctx);
}

}  // namespace kdesched::metrics::detail
