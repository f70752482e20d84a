#include "pkg/daemon/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <ctime>

namespace kdesched::daemon {
namespace {

class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    auto secs = std::chrono::system_clock::to_time_t(msg.time);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char ts[64];
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(ms));
    nlohmann::ordered_json j;
    j["ts"] = ts;
    j["level"] =
        std::string(spdlog::level::to_string_view(msg.level).data(), spdlog::level::to_string_view(msg.level).size());
    auto fields =
        nlohmann::ordered_json::parse(keyValuesToJson(std::string_view(msg.payload.data(), msg.payload.size())));
    for (auto& [k, v] : fields.items()) j[k] = v;
    std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    line += '\n';
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

}  // namespace

std::string keyValuesToJson(std::string_view s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  std::size_t i = 0;
  auto skipSpace = [&] {
    while (i < s.size() && s[i] == ' ') ++i;
  };
  // Bare words (not key=value) make the message: "reflector listed resource=pods objects=3" is
  // {"msg":"reflector listed","resource":"pods","objects":"3"}, as `msg="reflector listed" ...` is.
  std::string words;
  skipSpace();
  while (i < s.size()) {
    std::size_t eq = s.find('=', i);
    std::size_t sp = s.find(' ', i);
    if (eq == std::string_view::npos || (sp != std::string_view::npos && sp < eq) || eq == i) {
      std::size_t end = sp == std::string_view::npos ? s.size() : sp;
      if (!words.empty()) words += ' ';
      words += s.substr(i, end - i);
      i = end;
      skipSpace();
      continue;
    }
    std::string key(s.substr(i, eq - i));
    i = eq + 1;
    std::string value;
    if (i < s.size() && s[i] == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value += s[i++];
      }
      ++i;
    } else {
      std::size_t end = s.find(' ', i);
      if (end == std::string_view::npos) end = s.size();
      value = std::string(s.substr(i, end - i));
      i = end;
    }
    j[key] = value;
    skipSpace();
  }
  if (!words.empty()) {
    if (!j.contains("msg")) {
      // The message first, as in `msg="..." key=value` lines.
      nlohmann::ordered_json withMsg = {{"msg", words}};
      for (auto& [k, v] : j.items()) withMsg[k] = v;
      j = std::move(withMsg);
    } else {
      j["text"] = words;
    }
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status setupLogging(const std::string& format, int verbosity) {
  auto logger = spdlog::stderr_logger_mt("kdesched-daemon");
  if (format == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else if (format == "text") {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ level=%l %v", spdlog::pattern_time_type::utc);
  } else {
    return Status::error("--logging-format must be text or json, got \"" + format + "\"");
  }
  logger->set_level(verbosity >= 6   ? spdlog::level::trace
                    : verbosity >= 3 ? spdlog::level::debug
                                     : spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return Status::ok();
}

}  // namespace kdesched::daemon
