#include "pkg/api/quantity.h"

#include <algorithm>
#include <array>
#include <limits>

namespace kdesched::api {
namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr unsigned __int128 kMaxMagnitude = static_cast<unsigned __int128>(kMaxInt64);

// Exponents beyond this cannot change the outcome (any non-zero digit overflows or rounds up to
// one milli-unit), so they are clamped to keep the arithmetic in range.
constexpr std::int64_t kExponentClamp = 1'000'000;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The letters resource.Quantity's scanner accepts in a suffix before an optional exponent.
bool isSuffixLetter(char c) {
  switch (c) {
    case 'e':
    case 'E':
    case 'i':
    case 'n':
    case 'u':
    case 'm':
    case 'k':
    case 'K':
    case 'M':
    case 'G':
    case 'T':
    case 'P': return true;
    default: return false;
  }
}

// strconv.ParseInt(s, 10, 64): optional sign, at least one digit, no overflow.
bool parseExponent(std::string_view s, std::int64_t& out) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return false;
  // Accumulate as a negative number so INT64_MIN is representable, like strconv does.
  std::int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!isDigit(s[i])) return false;
    const int d = s[i] - '0';
    if (v < (std::numeric_limits<std::int64_t>::min() + d) / 10) return false;
    v = v * 10 - d;
  }
  if (!negative) {
    if (v == std::numeric_limits<std::int64_t>::min()) return false;
    v = -v;
  }
  out = v;
  return true;
}

// Maps a suffix to value = mantissa * 10^exp10 * 2^exp2, as quantitySuffixer.interpret does:
// decimal SI first, then binary SI, then an e/E exponent.
bool interpretSuffix(std::string_view s, std::int64_t& exp10, int& exp2) {
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal = {{
      {"", 0},
      {"n", -9},
      {"u", -6},
      {"m", -3},
      {"k", 3},
      {"M", 6},
      {"G", 9},
      {"T", 12},
      {"P", 15},
      {"E", 18},
  }};
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary = {{
      {"Ki", 10},
      {"Mi", 20},
      {"Gi", 30},
      {"Ti", 40},
      {"Pi", 50},
      {"Ei", 60},
  }};
  exp10 = 0;
  exp2 = 0;
  for (const auto& [name, e] : kDecimal) {
    if (s == name) {
      exp10 = e;
      return true;
    }
  }
  for (const auto& [name, e] : kBinary) {
    if (s == name) {
      exp2 = e;
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) return parseExponent(s.substr(1), exp10);
  return false;
}

// The digits of integer-part and fraction-part, read as one digit string.
class Digits {
 public:
  Digits(std::string_view intPart, std::string_view fracPart) : a_(intPart), b_(fracPart) {}
  std::size_t size() const { return a_.size() + b_.size(); }
  int at(std::size_t i) const { return (i < a_.size() ? a_[i] : b_[i - a_.size()]) - '0'; }

 private:
  std::string_view a_, b_;
};

// Reads digits [begin, end) as an integer; false when it exceeds int64.
bool accumulate(const Digits& d, std::size_t begin, std::size_t end, unsigned __int128& out) {
  out = 0;
  for (std::size_t i = begin; i < end; ++i) {
    out = out * 10 + static_cast<unsigned>(d.at(i));
    if (out > kMaxMagnitude) return false;
  }
  return true;
}

}  // namespace

namespace {

enum class Parsed { Ok, Invalid, Overflow };

// The parse behind both public entry points: the amount in `out` (its sign in `negative`), or why
// there is none. Overflow is kept apart from illegal text so the decoders can saturate it.
Parsed parseMilli(std::string_view text, std::int64_t& out, bool& negative) {
  out = 0;
  negative = false;
  const Parsed invalid = Parsed::Invalid;
  const Parsed overflow = Parsed::Overflow;
  if (text.empty()) return invalid;

  // Scan exactly like resource.parseQuantityString: [sign] digits [. digits] letters [sign] digits.
  // Note that every part may be empty, so upstream accepts "Mi", "." or "-" as zero.
  const std::size_t n = text.size();
  std::size_t pos = 0;
  if (text[0] == '-' || text[0] == '+') negative = text[pos++] == '-';
  const std::size_t intBegin = pos;
  while (pos < n && isDigit(text[pos])) ++pos;
  const std::string_view intPart = text.substr(intBegin, pos - intBegin);
  std::string_view fracPart;
  if (pos < n && text[pos] == '.') {
    const std::size_t fracBegin = ++pos;
    while (pos < n && isDigit(text[pos])) ++pos;
    fracPart = text.substr(fracBegin, pos - fracBegin);
  }
  const std::size_t suffixBegin = pos;
  while (pos < n && isSuffixLetter(text[pos])) ++pos;
  if (pos < n && (text[pos] == '+' || text[pos] == '-')) ++pos;
  while (pos < n && isDigit(text[pos])) ++pos;
  if (pos != n) return invalid;

  std::int64_t exp10 = 0;
  int exp2 = 0;
  if (!interpretSuffix(text.substr(suffixBegin), exp10, exp2)) return invalid;

  // value * 1000 = D * 2^exp2 * 10^k where D is the digit string without its decimal point.
  const Digits digits(intPart, fracPart);
  exp10 = std::clamp<std::int64_t>(exp10, -kExponentClamp, kExponentClamp);
  const std::int64_t k = exp10 - static_cast<std::int64_t>(fracPart.size()) + 3;

  std::size_t first = 0;  // first significant digit
  while (first < digits.size() && digits.at(first) == 0) ++first;
  if (first == digits.size()) return Parsed::Ok;

  unsigned __int128 magnitude = 0;
  if (k >= 0) {
    if (!accumulate(digits, first, digits.size(), magnitude)) return overflow;
    for (std::int64_t i = 0; i < k; ++i) {
      magnitude *= 10;
      if (magnitude > kMaxMagnitude) return overflow;
    }
    magnitude <<= exp2;  // exp2 <= 60 and magnitude <= 2^63 keeps this within 128 bits
    if (magnitude > kMaxMagnitude) return overflow;
  } else {
    // Split D at the milli point: integer digits [0, split), fraction digits [split, size).
    const auto m = static_cast<std::size_t>(-k);
    const std::size_t split = digits.size() > m ? digits.size() - m : 0;
    if (first < split) {
      if (!accumulate(digits, first, split, magnitude)) return overflow;
      magnitude <<= exp2;
      if (magnitude > kMaxMagnitude) return overflow;
    }
    // Round the fraction up, as ParseQuantity (to nano) and MilliValue (to milli) both do: the
    // result is ceil(F * 2^exp2 / 10^m) for the m fraction digits F.
    std::size_t fracFirst = std::max(first, split);
    while (fracFirst < digits.size() && digits.at(fracFirst) == 0) ++fracFirst;
    if (fracFirst < digits.size()) {
      const std::size_t leadingZeros = m - (digits.size() - fracFirst);
      std::uint64_t roundedUp = 1;  // F is non-zero here
      // F * 2^exp2 < 10^(m - leadingZeros) * 2^60 < 10^m once 19 or more leading zeros: ceil is 1.
      if (exp2 > 0 && leadingZeros < 19) {
        // Long multiplication of the fraction digits by 2^exp2 from the right; the carry out of the
        // top is the integer part. carry <= 2^exp2, so every step fits in 64 bits.
        std::uint64_t carry = 0;
        bool remainder = false;
        for (std::size_t i = digits.size(); i-- > fracFirst;) {
          const std::uint64_t v = (static_cast<std::uint64_t>(digits.at(i)) << exp2) + carry;
          remainder = remainder || v % 10 != 0;
          carry = v / 10;
        }
        for (std::size_t i = 0; i < leadingZeros; ++i) {
          remainder = remainder || carry % 10 != 0;
          carry /= 10;
        }
        roundedUp = carry + (remainder ? 1 : 0);
      }
      magnitude += roundedUp;
      if (magnitude > kMaxMagnitude) return overflow;
    }
  }
  // Negative amounts round away from zero, as upstream rounds the magnitude.
  const auto value = static_cast<std::int64_t>(magnitude);
  out = negative ? -value : value;
  return Parsed::Ok;
}

}  // namespace

Result<std::int64_t> parseQuantityMilli(std::string_view text) {
  std::int64_t milli = 0;
  bool negative = false;
  switch (parseMilli(text, milli, negative)) {
    case Parsed::Ok: return milli;
    case Parsed::Invalid: break;
    case Parsed::Overflow:
      return Status::error("quantity \"" + std::string(text) + "\" does not fit in int64 milli-units");
  }
  return Status::error("invalid quantity \"" + std::string(text) + "\"");
}

Result<SaturatingMilli> parseQuantityMilliSaturating(std::string_view text) {
  std::int64_t milli = 0;
  bool negative = false;
  switch (parseMilli(text, milli, negative)) {
    case Parsed::Ok: return SaturatingMilli{milli, false};
    case Parsed::Invalid: break;
    case Parsed::Overflow: return SaturatingMilli{negative ? -kSaturatedMilli : kSaturatedMilli, true};
  }
  return Status::error("invalid quantity \"" + std::string(text) + "\"");
}

std::string formatMilli(std::int64_t milli, bool binary) {
  if (milli == 0) return "0";
  std::string out = milli < 0 ? "-" : "";
  // Two's complement negation through unsigned avoids overflow for INT64_MIN.
  const std::uint64_t mag = milli < 0 ? 0 - static_cast<std::uint64_t>(milli) : static_cast<std::uint64_t>(milli);
  if (mag % 1000 != 0) return out + std::to_string(mag) + "m";
  const std::uint64_t units = mag / 1000;
  if (binary) {
    static constexpr std::array<std::string_view, 6> kSuffix = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    for (int i = static_cast<int>(kSuffix.size()); i >= 1; --i) {
      const std::uint64_t unit = std::uint64_t{1} << (10 * i);
      if (units >= unit && units % unit == 0) return out + std::to_string(units / unit) + std::string(kSuffix[i - 1]);
    }
    return out + std::to_string(units);
  }
  static constexpr std::array<std::string_view, 6> kSuffix = {"k", "M", "G", "T", "P", "E"};
  std::uint64_t unit = 1'000'000'000'000'000'000ULL;
  for (int i = static_cast<int>(kSuffix.size()); i >= 1; --i, unit /= 1000) {
    if (units % unit == 0) return out + std::to_string(units / unit) + std::string(kSuffix[i - 1]);
  }
  return out + std::to_string(units);
}

// ---------------------------------------------------------------------------------------------
ResourceList::ResourceList(std::initializer_list<std::pair<std::string_view, std::int64_t>> milli) {
  for (const auto& [name, v] : milli) set(Symbol(name), v);
}

namespace {
// Binary search by name content; symbols are equal exactly when their contents are.
template <typename Items>
auto findByName(Items& items, const Symbol& name) {
  return std::lower_bound(items.begin(), items.end(), name,
                          [](const ResourceList::Item& item, const Symbol& n) { return item.first < n; });
}

}  // namespace

std::int64_t addSaturating(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kSaturatedMilli : std::numeric_limits<std::int64_t>::min();
  return std::min(r, kSaturatedMilli);
}

std::int64_t mulSaturating(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return kSaturatedMilli;
  return r;
}

std::int64_t milliFromDouble(double milli) {
  if (!(milli == milli)) return 0;
  // 2^63 is the first double beyond int64; every double below it converts exactly enough.
  if (milli >= 9223372036854775808.0) return kSaturatedMilli;
  if (milli <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(milli);
}

std::int64_t ResourceList::get(const Symbol& name) const {
  auto it = findByName(items_, name);
  return it != items_.end() && it->first == name ? it->second : 0;
}

bool ResourceList::has(const Symbol& name) const {
  auto it = findByName(items_, name);
  return it != items_.end() && it->first == name;
}

void ResourceList::set(const Symbol& name, std::int64_t milli) {
  auto it = findByName(items_, name);
  if (it != items_.end() && it->first == name) {
    it->second = milli;
  } else {
    items_.insert(it, {name, milli});
  }
}

void ResourceList::add(const Symbol& name, std::int64_t milli) {
  auto it = findByName(items_, name);
  if (it != items_.end() && it->first == name) {
    it->second = addSaturating(it->second, milli);
  } else {
    items_.insert(it, {name, milli});
  }
}

void ResourceList::addAll(const ResourceList& other) {
  for (const auto& [name, v] : other) add(name, v);
}

void ResourceList::maxWith(const ResourceList& other) {
  for (const auto& [name, v] : other) {
    auto it = findByName(items_, name);
    if (it != items_.end() && it->first == name) {
      it->second = std::max(it->second, v);
    } else {
      items_.insert(it, {name, v});
    }
  }
}

bool isBinaryResource(std::string_view name) {
  return name == "memory" || name == "ephemeral-storage" || name == "storage" || name.starts_with("hugepages-");
}

std::string ResourceList::saturatedNames() const {
  std::string out;
  for (const auto& [name, v] : items_) {
    if (!isSaturated(v)) continue;
    if (!out.empty()) out += ',';
    out += name.view();
  }
  return out;
}

std::string ResourceList::toString() const {
  std::string out;
  for (const auto& [name, v] : items_) {
    if (&name != &items_.front().first) out += ',';
    out += name.view();
    out += '=';
    out += formatMilli(v, isBinaryResource(name.view()));
  }
  return out;
}

}  // namespace kdesched::api
