// Operator logs: one line per decision, a message and typed fields. Call sites pass values, never
// pre-formatted "key=value" text, so each format can write them correctly:
//   text: ts=2026-11-30T01:34:59.113Z level=info msg="Evicted pod" pod=default/x evicted=1  (logfmt:
//         values quoted when needed, quotes, backslashes and control characters escaped)
//   json: {"ts":"2026-11-30T01:34:59.113Z","level":"info","msg":"Evicted pod","pod":"default/x","evicted":1}
//         (numbers and booleans typed; invalid UTF-8 replaced with U+FFFD in both formats)
//
//   log::info("Evicted pod", {{"pod", pod.key()}, {"node", node}, {"seconds", 0.25}});
//
// Values are borrowed for the duration of the call only.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "pkg/base/clock.h"
#include "pkg/base/status.h"

namespace kdesched::log {

enum class Level { Trace, Debug, Info, Warn, Error };
enum class Format { Text, Json };

// One typed value. Strings are borrowed (string_view), so a Field must not outlive the call.
class Value {
 public:
  enum class Type { String, Int, Uint, Double, Bool };

  Value(std::string_view s) : type_(Type::String), s_(s) {}      // NOLINT(google-explicit-constructor)
  Value(const std::string& s) : type_(Type::String), s_(s) {}    // NOLINT
  Value(const char* s) : type_(Type::String), s_(s ? s : "") {}  // NOLINT
  Value(bool b) : type_(Type::Bool), b_(b) {}                    // NOLINT
  Value(double d) : type_(Type::Double), d_(d) {}                // NOLINT
  Value(float d) : type_(Type::Double), d_(d) {}                 // NOLINT
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T>, int> = 0>
  Value(T i) : type_(Type::Int), i_(static_cast<std::int64_t>(i)) {}  // NOLINT
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_unsigned_v<T>, int> = 0>
  Value(T u) : type_(Type::Uint), u_(static_cast<std::uint64_t>(u)) {}  // NOLINT

  Type type() const { return type_; }
  std::string_view str() const { return s_; }
  std::int64_t i() const { return i_; }
  std::uint64_t u() const { return u_; }
  double d() const { return d_; }
  bool b() const { return b_; }

 private:
  Type type_;
  std::string_view s_;
  std::int64_t i_ = 0;
  std::uint64_t u_ = 0;
  double d_ = 0;
  bool b_ = false;
};

struct Field {
  std::string_view key;
  Value value;
};
using Fields = std::initializer_list<Field>;

// One record as the formats see it.
struct Record {
  Clock::WallTime time;
  Level level;
  std::string_view msg;
  Fields fields;
};

// Formats a record as one line without the trailing newline.
std::string formatText(const Record& r);
std::string formatJson(const Record& r);

std::string_view toString(Level l);

// Selects the format ("text" or "json") and upstream's -v verbosity (0-2 info, 3-5 debug, 6+
// trace). Until called, logs are text at info level on stderr.
Status setup(std::string_view format, int verbosity);

// Where lines go (stderr by default; tests capture them) and where timestamps come from.
using Writer = std::function<void(std::string_view line)>;
void setWriter(Writer w);
void setClock(std::shared_ptr<Clock> clock);
void setFormat(Format f);
void setLevel(Level l);

bool enabled(Level l);
void write(Level l, std::string_view msg, Fields fields = {});

inline void trace(std::string_view msg, Fields f = {}) { write(Level::Trace, msg, f); }
inline void debug(std::string_view msg, Fields f = {}) { write(Level::Debug, msg, f); }
inline void info(std::string_view msg, Fields f = {}) { write(Level::Info, msg, f); }
inline void warn(std::string_view msg, Fields f = {}) { write(Level::Warn, msg, f); }
inline void error(std::string_view msg, Fields f = {}) { write(Level::Error, msg, f); }

}  // namespace kdesched::log
