#include "pkg/api/yaml_scalar.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <string>

namespace kdesched::api {
namespace {

// go-yaml v2's resolve table (resolve.go).
constexpr std::string_view kNull[] = {"", "~", "null", "Null", "NULL"};
constexpr std::string_view kTrue[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
constexpr std::string_view kFalse[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
constexpr std::string_view kPlusInf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
constexpr std::string_view kMinusInf[] = {"-.inf", "-.Inf", "-.INF"};
constexpr std::string_view kNan[] = {".nan", ".NaN", ".NAN"};

template <std::size_t N>
bool isOneOf(std::string_view s, const std::string_view (&options)[N]) {
  return std::find(std::begin(options), std::end(options), s) != std::end(options);
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// strconv.ParseInt(s, 0, 64), else strconv.ParseUint(s, 0, 64): an optional sign (ParseInt only),
// then a 0x/0o/0b prefix or a leading 0 for octal, else decimal. `s` has no underscores.
bool readGoInt(std::string_view s, PlainScalar& out) {
  const bool hasSign = !s.empty() && (s[0] == '+' || s[0] == '-');
  const bool negative = hasSign && s[0] == '-';
  if (hasSign) s.remove_prefix(1);
  if (s.empty()) return false;
  int base = 10;
  if (s[0] == '0' && s.size() > 1) {
    const char prefix = static_cast<char>(s[1] | 0x20);
    if (s.size() > 2 && (prefix == 'x' || prefix == 'o' || prefix == 'b')) {
      base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
      s.remove_prefix(2);
    } else {
      base = 8;  // "0755"
      s.remove_prefix(1);
    }
  }
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  constexpr auto kMaxInt64 = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (v > kMaxInt64 + 1) return false;
    out.int64 = v == kMaxInt64 + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(v);
  } else if (v <= kMaxInt64) {
    out.int64 = static_cast<std::int64_t>(v);
  } else if (!hasSign) {
    out.uint64 = v;
    out.aboveInt64 = true;
  } else {
    return false;
  }
  out.type = ScalarType::Int;
  return true;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (go-yaml's yamlStyleFloat).
bool isYamlStyleFloat(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// For float text that from_chars found out of range: whether it is too large (strconv.ParseFloat
// fails) rather than too small (ParseFloat reads it as zero). The magnitude of the first
// significant digit decides: the range ends are hundreds of decades from 10^0.
bool tooLarge(std::string_view s) {
  const std::size_t e = s.find_first_of("eE");
  long long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view x = s.substr(e + 1);
    const bool negative = !x.empty() && x[0] == '-';
    if (!x.empty() && (x[0] == '+' || x[0] == '-')) x.remove_prefix(1);
    const auto [ptr, ec] = std::from_chars(x.data(), x.data() + x.size(), exponent);
    // Any exponent beyond ±2^40 decides the same way, and clamping it keeps the digit counts
    // added below from overflowing ("12e9223372036854775807" did).
    constexpr long long kFarOut = 1LL << 40;
    if (ec == std::errc::result_out_of_range || exponent > kFarOut) exponent = kFarOut;
    if (negative) exponent = -exponent;
  }
  const std::string_view mantissa = s.substr(0, e);
  const std::size_t dot = mantissa.find('.');
  std::string_view whole = mantissa.substr(0, dot);
  whole.remove_prefix(std::min(whole.find_first_not_of("+-0"), whole.size()));
  if (!whole.empty()) return static_cast<long long>(whole.size()) - 1 + exponent > 0;
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
  const std::size_t zeros = std::min(fraction.find_first_not_of('0'), fraction.size());
  return exponent - static_cast<long long>(zeros) - 1 > 0;
}

// strconv.ParseFloat on text that matched isYamlStyleFloat.
void readFloat(std::string_view s, PlainScalar& out) {
  out.type = ScalarType::Float;
  std::string_view digits = s;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);  // from_chars takes no '+'
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.real);
  if (ec != std::errc::result_out_of_range) return;
  const bool negative = !digits.empty() && digits[0] == '-';
  out.outOfRange = tooLarge(s);
  const double magnitude = out.outOfRange ? std::numeric_limits<double>::infinity() : 0.0;
  out.real = negative ? -magnitude : magnitude;
}

}  // namespace

PlainScalar resolvePlainScalar(std::string_view s) {
  PlainScalar r;
  if (isOneOf(s, kNull)) {
    r.type = ScalarType::Null;
    return r;
  }
  if (isOneOf(s, kTrue) || isOneOf(s, kFalse)) {
    r.type = ScalarType::Bool;
    r.boolean = isOneOf(s, kTrue);
    return r;
  }
  if (isOneOf(s, kPlusInf) || isOneOf(s, kMinusInf) || isOneOf(s, kNan)) {
    r.type = ScalarType::Float;
    const double inf = std::numeric_limits<double>::infinity();
    r.real = isOneOf(s, kNan) ? std::numeric_limits<double>::quiet_NaN() : isOneOf(s, kMinusInf) ? -inf : inf;
    return r;
  }
  // go-yaml looks at the first character: only a '.', a digit or a sign can start a number, and
  // after a '.' the text is a float or nothing (underscores stay, so "._5" is a string).
  const char first = s.front();
  if (first == '.') {
    if (isYamlStyleFloat(s)) readFloat(s, r);
    return r;
  }
  if (!isDigit(first) && first != '+' && first != '-') return r;
  std::string buffer;
  std::string_view plain = s;
  if (s.find('_') != std::string_view::npos) {
    buffer.assign(s);
    std::erase(buffer, '_');
    plain = buffer;
  }
  if (readGoInt(plain, r)) return r;
  if (isYamlStyleFloat(plain)) readFloat(plain, r);
  return r;
}

bool isResolvedTag(std::string_view tag) {
  return tag.empty() || tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
         tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null";
}

}  // namespace kdesched::api
