#include "pkg/base/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cmath>
#include <ctime>
#include <mutex>

#include <fmt/format.h>

#include "pkg/base/utf8.h"

namespace kdesched::log {
namespace {

struct State {
  std::mutex mu;
  Writer writer;
  std::shared_ptr<Clock> clock = systemClock();
  std::atomic<Format> format{Format::Text};
  std::atomic<Level> level{Level::Info};
};

State& state() {
  static State s;
  return s;
}

void timestamp(Clock::WallTime t, std::string& out) {
  const auto since = t.time_since_epoch();
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
  long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
  if (ms < 0) ms += 1000;
  std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  fmt::format_to(std::back_inserter(out), "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

// Appends `s` with control characters escaped as JSON and logfmt both read them; invalid UTF-8
// becomes U+FFFD.
void escaped(std::string_view s, std::string& out) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t n = utf8::sequenceLength(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f)
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
    ++i;
  }
}

void quoted(std::string_view s, std::string& out) {
  out += '"';
  escaped(s, out);
  out += '"';
}

// logfmt: a value is written bare when it is non-empty and has no space, '=', quote, backslash or
// control character; otherwise quoted.
bool needsQuotes(std::string_view s) {
  if (s.empty()) return true;
  for (unsigned char c : s)
    if (c <= ' ' || c == '=' || c == '"' || c == '\\' || c == 0x7f) return true;
  return !utf8::valid(s);
}

void number(const Value& v, bool json, std::string& out) {
  switch (v.type()) {
    case Value::Type::Int: fmt::format_to(std::back_inserter(out), "{}", v.i()); return;
    case Value::Type::Uint: fmt::format_to(std::back_inserter(out), "{}", v.u()); return;
    case Value::Type::Bool: out += v.b() ? "true" : "false"; return;
    case Value::Type::Double:
      if (!std::isfinite(v.d())) {
        // JSON has no NaN or Inf: write them as strings there.
        const char* word = std::isnan(v.d()) ? "NaN" : v.d() > 0 ? "+Inf" : "-Inf";
        if (json)
          quoted(word, out);
        else
          out += word;
        return;
      }
      fmt::format_to(std::back_inserter(out), "{}", v.d());
      return;
    case Value::Type::String: return;
  }
}

void textValue(const Value& v, std::string& out) {
  if (v.type() != Value::Type::String) return number(v, false, out);
  if (needsQuotes(v.str()))
    quoted(v.str(), out);
  else
    out.append(v.str());
}

void jsonValue(const Value& v, std::string& out) {
  if (v.type() != Value::Type::String) return number(v, true, out);
  quoted(v.str(), out);
}

}  // namespace

std::string_view toString(Level l) {
  switch (l) {
    case Level::Trace: return "trace";
    case Level::Debug: return "debug";
    case Level::Info: return "info";
    case Level::Warn: return "warn";
    case Level::Error: return "error";
  }
  return "info";
}

std::string formatText(const Record& r) {
  std::string out;
  out.reserve(128);
  out += "ts=";
  timestamp(r.time, out);
  out += " level=";
  out += toString(r.level);
  out += " msg=";
  quoted(r.msg, out);
  for (const Field& f : r.fields) {
    out += ' ';
    out.append(f.key);
    out += '=';
    textValue(f.value, out);
  }
  return out;
}

std::string formatJson(const Record& r) {
  std::string out;
  out.reserve(160);
  out += "{\"ts\":\"";
  timestamp(r.time, out);
  out += "\",\"level\":\"";
  out += toString(r.level);
  out += "\",\"msg\":";
  quoted(r.msg, out);
  for (const Field& f : r.fields) {
    out += ',';
    quoted(f.key, out);
    out += ':';
    jsonValue(f.value, out);
  }
  out += '}';
  return out;
}

void setWriter(Writer w) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().writer = std::move(w);
}

void setClock(std::shared_ptr<Clock> clock) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().clock = clock ? std::move(clock) : systemClock();
}

void setFormat(Format f) { state().format = f; }
void setLevel(Level l) { state().level = l; }

bool enabled(Level l) { return l >= state().level.load(std::memory_order_relaxed); }

Status setup(std::string_view format, int verbosity) {
  if (format == "json") {
    setFormat(Format::Json);
  } else if (format == "text") {
    setFormat(Format::Text);
  } else {
    return Status::error("--logging-format must be text or json, got \"" + std::string(format) + "\"");
  }
  setLevel(verbosity >= 6 ? Level::Trace : verbosity >= 3 ? Level::Debug : Level::Info);
  return Status::ok();
}

void write(Level l, std::string_view msg, Fields fields) {
  if (!enabled(l)) return;
  State& s = state();
  std::shared_ptr<Clock> clock;
  Writer writer;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    clock = s.clock;
    writer = s.writer;
  }
  Record r{clock->wallNow(), l, msg, fields};
  std::string line = s.format.load() == Format::Json ? formatJson(r) : formatText(r);
  if (writer) {
    writer(line);
    return;
  }
  // spdlog's stderr sink: one write per line under its own lock, flushed at once.
  static const std::shared_ptr<spdlog::logger> sink = [] {
    auto logger = spdlog::stderr_logger_mt("kdesched");
    logger->set_pattern("%v");
    logger->set_level(spdlog::level::trace);
    logger->flush_on(spdlog::level::trace);
    return logger;
  }();
  sink->log(spdlog::level::info, "{}", line);
}

}  // namespace kdesched::log
