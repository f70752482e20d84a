#include "pkg/inspect/output.h"

#include <yaml-cpp/yaml.h>

#include <cctype>

namespace kdesched::inspect {
namespace {

// YYYY-MM-DD at the start: a YAML 1.1 timestamp (or a date) to readers such as PyYAML and go-yaml.
bool looksLikeDate(const std::string& s) {
  static constexpr const char* kShape = "dddd-dd-dd";
  if (s.size() < 10) return false;
  for (std::size_t i = 0; i < 10; ++i)
    if (kShape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != '-') return false;
  return true;
}

void emit(const nlohmann::ordered_json& j, YAML::Emitter& e) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      e << YAML::BeginMap;
      for (auto it = j.begin(); it != j.end(); ++it) {
        e << YAML::Key << it.key() << YAML::Value;
        emit(it.value(), e);
      }
      e << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      e << YAML::BeginSeq;
      for (const auto& v : j) emit(v, e);
      e << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      // Quoted when a YAML reader would take it for another type ("true", "1", "null", "", and
      // YAML 1.1's timestamps, "2026-01-02T03:04:05Z", as kubectl -o yaml quotes them).
      YAML::Node probe;
      bool plain = !s.empty();
      try {
        probe = YAML::Load(s);
        plain = plain && probe.IsScalar() && probe.Tag() == "?" && probe.Scalar() == s;
        bool b;
        double d;
        if (plain && (YAML::convert<bool>::decode(probe, b) || YAML::convert<double>::decode(probe, d))) plain = false;
      } catch (const YAML::Exception&) {
        plain = false;
      }
      if (plain && looksLikeDate(s)) plain = false;
      if (!plain) e << YAML::DoubleQuoted;
      e << s;
      break;
    }
    case nlohmann::json::value_t::boolean: e << j.get<bool>(); break;
    case nlohmann::json::value_t::number_integer: e << j.get<long long>(); break;
    case nlohmann::json::value_t::number_unsigned: e << j.get<unsigned long long>(); break;
    case nlohmann::json::value_t::number_float: e << j.get<double>(); break;
    default: e << YAML::Null; break;
  }
}

}  // namespace

void writeYaml(const nlohmann::ordered_json& j, std::ostream& out) {
  YAML::Emitter e;
  emit(j, e);
  out << e.c_str() << "\n";
}

}  // namespace kdesched::inspect
