// The connections of the metrics server (server.h): each one a state machine on the server's one
// io_context thread, and the table that holds them to the connection limit. Everything here runs
// on that thread only, so nothing is locked.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "pkg/metrics/metrics.h"
#include "pkg/metrics/server.h"

namespace kdesched::metrics::detail {

struct Reply {
  unsigned status = 200;
  std::string body;
  std::string contentType = "text/plain; charset=utf-8";
};
// The answer to a GET of `path` (the query string removed).
using Router = std::function<Reply(const std::string& path)>;

class ConnectionTable;

// What every connection shares: the bounds, the routes, the counters and the table.
struct ServingContext {
  ServerLimits limits;
  Router route;
  Metrics* metrics = nullptr;  // null: nothing counted
  ConnectionTable* table = nullptr;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Waiting phases are Handshake, Head (a request head being read) and Idle (keep-alive, between
  // requests); Responding is the only phase in which the connection does work for its client.
  enum class Phase { Handshake, Head, Idle, Responding, Closing };

  explicit Connection(ServingContext& ctx) : ctx_(ctx) {}
  virtual ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  virtual void start() = 0;
  // Closes the socket now: every pending operation ends, and with it the connection. shed() is
  // the limit's close, already counted, so the ending operations count nothing; close() (stop())
  // lets them count what they saw.
  virtual void shed() = 0;
  virtual void close() = 0;

  Phase phase() const { return phase_; }
  // At least one whole request was read (the connection was ever useful).
  bool served() const { return served_; }
  // When the current phase began, in the table's order of events.
  std::uint64_t since() const { return since_; }

 protected:
  void enter(Phase p);
  void markServed() { served_ = true; }
  ServingContext& ctx_;

 private:
  Phase phase_ = Phase::Handshake;
  bool served_ = false;
  std::uint64_t since_ = 0;
};

// The open connections, at most `max`. Which one gives way at the limit is ServerLimits'
// maxConnections rule.
class ConnectionTable {
 public:
  enum class Admission { Admitted, ClosedWaiting, ClosedIdle, Refused };

  ConnectionTable(int max, Metrics* metrics) : max_(max), metrics_(metrics) {}
  // Makes room for `c` if needed and holds it; Refused: no slot could be freed (do not start it).
  Admission admit(const std::shared_ptr<Connection>& c);
  void remove(const Connection* c);
  void closeAll();
  std::uint64_t tick() { return ++tick_; }
  std::size_t size() const { return open_.size(); }

 private:
  std::shared_ptr<Connection> victim() const;

  int max_;
  Metrics* metrics_;
  std::uint64_t tick_ = 0;
  std::map<const Connection*, std::weak_ptr<Connection>> open_;
};

std::shared_ptr<Connection> makePlainConnection(boost::asio::ip::tcp::socket socket, ServingContext& ctx);
std::shared_ptr<Connection> makeTlsConnection(boost::asio::ip::tcp::socket socket,
                                              std::shared_ptr<boost::asio::ssl::context> tls, ServingContext& ctx);

}  // namespace kdesched::metrics::detail
