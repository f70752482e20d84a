#include "pkg/api/json_scan.h"

#include <array>
#include <cstdint>

#include "pkg/base/utf8.h"

namespace kdesched::api {
namespace {

// Bytes a string's fast path stops at: the quote, the backslash, control characters and the
// first byte of a multi-byte UTF-8 sequence.
constexpr std::array<bool, 256> kStringStops = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = true;
  for (int c = 0x80; c < 0x100; ++c) t[static_cast<std::size_t>(c)] = true;
  t['"'] = t['\\'] = true;
  return t;
}();

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isWordStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '\''; }

class Scanner {
 public:
  Scanner(std::string_view text, std::size_t maxDepth) : s_(text), maxDepth_(maxDepth) {}

  JsonScan run() {
    JsonScan out;
    for (;;) {
      skipSpace();
      if (pos_ >= s_.size()) break;
      const std::size_t begin = pos_;
      if (!out.documents.empty() && s_[pos_] != '{' && s_[pos_] != '[') {
        fail("unexpected " + found() + " after the JSON document that ends at byte " +
             std::to_string(out.documents.back().end));
      } else if (value()) {
        out.documents.push_back({begin, pos_});
        out.items.push_back(std::move(items_));
        items_ = JsonItems{};
        continue;
      }
      out.error = std::move(error_);
      break;
    }
    return out;
  }

 private:
  // One value, containers iteratively with an explicit stack: no recursion, whatever the input.
  bool value() {
    for (;;) {
      skipSpace();
      if (pos_ >= s_.size()) return fail("unexpected end of the file: expected a value");
      if (inItems_ && stack_.size() == itemsDepth_) elementBegin_ = pos_;
      const char c = s_[pos_];
      if (c == '{' || c == '[') {
        if (stack_.size() >= maxDepth_) return fail("nesting deeper than " + std::to_string(maxDepth_) + " levels");
        if (c == '[' && isItemsArray()) openItems();
        stack_.push_back(c);
        ++pos_;
        skipSpace();
        const char close = c == '{' ? '}' : ']';
        if (pos_ < s_.size() && s_[pos_] == close) {
          ++pos_;
          closed();
        } else if (c == '{') {
          if (!key()) return false;
          continue;
        } else {
          continue;
        }
      } else if (!scalar()) {
        return false;
      } else {
        valueEnded();
      }
      // After a complete value: close containers or move on to the next member.
      bool more = false;
      while (!stack_.empty() && !more) {
        skipSpace();
        const bool object = stack_.back() == '{';
        const char close = object ? '}' : ']';
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          if (object && !key()) return false;
          more = true;
        } else if (pos_ < s_.size() && s_[pos_] == close) {
          ++pos_;
          closed();
        } else {
          return fail(std::string("expected ',' or '") + close + "' after " +
                      (object ? "an object member" : "an array element") + ", found " + found());
        }
      }
      if (!more) return true;
    }
  }

  // The array a [ at pos_ opens is the document's list of items: the root array, or the value of
  // the root object's first "items" member.
  bool isItemsArray() const {
    if (items_.found) return false;
    return stack_.empty() || (stack_.size() == 1 && stack_[0] == '{' && itemsKey_);
  }
  void openItems() {
    items_.found = inItems_ = true;
    items_.array.begin = pos_;
    itemsDepth_ = stack_.size() + 1;
  }
  // A container closed at pos_.
  void closed() {
    if (inItems_ && stack_.size() == itemsDepth_) {
      inItems_ = false;
      items_.array.end = pos_;
    }
    stack_.pop_back();
    valueEnded();
  }
  // A value ended at pos_: an element of the items array when it is one level inside it.
  void valueEnded() {
    if (inItems_ && stack_.size() == itemsDepth_) items_.elements.push_back({elementBegin_, pos_});
  }

  // An object member's key and its colon.
  bool key() {
    skipSpace();
    if (pos_ >= s_.size() || s_[pos_] != '"') {
      if (pos_ < s_.size() && isWordStart(s_[pos_])) unquoted_ = true;
      return fail("expected a string in double quotes as the object key, found " + found());
    }
    const std::size_t keyBegin = pos_;
    if (!string()) return false;
    if (stack_.size() == 1) itemsKey_ = s_.substr(keyBegin, pos_ - keyBegin) == "\"items\"";
    skipSpace();
    if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':' after the object key, found " + found());
    ++pos_;
    return true;
  }

  bool scalar() {
    const char c = s_[pos_];
    if (c == '"') return string();
    if (c == '-' || isDigit(c)) return number();
    for (std::string_view word : {std::string_view("true"), std::string_view("false"), std::string_view("null")}) {
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return true;
      }
    }
    if (isWordStart(c)) unquoted_ = true;
    return fail("expected a value, found " + found());
  }

  bool string() {
    const std::size_t open = pos_++;
    for (;;) {
      while (pos_ < s_.size() && !kStringStops[static_cast<unsigned char>(s_[pos_])]) ++pos_;
      if (pos_ >= s_.size()) {
        pos_ = open;
        return fail("a string that is never closed");
      }
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (!escape()) return false;
      } else if (c < 0x20) {
        return fail("a control character (byte 0x" + hex(c) + ") inside a string: it must be escaped");
      } else {
        const std::size_t n = utf8::sequenceLength(s_, pos_);
        if (n == 0) return fail("text that is not UTF-8 (byte 0x" + hex(c) + "): the file must be UTF-8");
        pos_ += n;
      }
    }
  }

  bool escape() {
    if (pos_ + 1 >= s_.size()) return fail("a string that is never closed");
    const char e = s_[pos_ + 1];
    if (e == 'u') {
      for (std::size_t i = 2; i < 6; ++i) {
        const char h = pos_ + i < s_.size() ? s_[pos_ + i] : '\0';
        if (!isDigit(h) && !((h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
          return fail("\\u must be followed by four hex digits");
      }
      pos_ += 6;
      return true;
    }
    if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
      return fail("unknown escape \\" + (e >= 0x20 && e < 0x7F ? std::string(1, e) : "(byte 0x" + hex(e) + ")") +
                  " in a string");
    }
    pos_ += 2;
    return true;
  }

  bool number() {
    const std::size_t start = pos_;
    auto digits = [&] {
      const std::size_t from = pos_;
      while (pos_ < s_.size() && isDigit(s_[pos_])) ++pos_;
      return pos_ > from;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return fail("a number needs digits after '-'");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return fail("a number needs digits after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return fail("a number needs digits in its exponent");
    }
    if (pos_ < s_.size() && (isDigit(s_[pos_]) || isWordStart(s_[pos_]))) {
      pos_ = start;
      return fail("not a JSON number: " + found());
    }
    return true;
  }

  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }

  // What stands at pos_, for messages: a short printable excerpt, a byte value, or the end.
  std::string found() const {
    if (pos_ >= s_.size()) return "the end of the file";
    const auto c = static_cast<unsigned char>(s_[pos_]);
    if (c < 0x20 || c >= 0x7F) return "byte 0x" + hex(c);
    // A punctuation mark alone, else the word that starts here, cut at 16 bytes.
    constexpr std::string_view kPunctuation = "\",:{}[]";
    std::size_t n = 1;
    if (kPunctuation.find(s_[pos_]) == std::string_view::npos) {
      while (n < 16 && pos_ + n < s_.size() && s_[pos_ + n] > 0x20 && s_[pos_ + n] < 0x7F &&
             kPunctuation.find(s_[pos_ + n]) == std::string_view::npos)
        ++n;
    }
    return "'" + std::string(s_.substr(pos_, n)) + "'";
  }

  static std::string hex(unsigned char c) {
    static constexpr char kHex[] = "0123456789abcdef";
    return {kHex[c >> 4], kHex[c & 0xf]};
  }
  static std::string hex(char c) { return hex(static_cast<unsigned char>(c)); }

  bool fail(std::string message) {
    error_ = JsonSyntaxError{pos_, std::move(message), unquoted_};
    return false;
  }

  std::string_view s_;
  std::size_t maxDepth_;
  std::size_t pos_ = 0;
  std::vector<char> stack_;
  bool unquoted_ = false;
  JsonItems items_;             // the current document's
  bool itemsKey_ = false;       // the root object's last key was "items"
  bool inItems_ = false;        // inside the items array
  std::size_t itemsDepth_ = 0;  // the stack's size inside it
  std::size_t elementBegin_ = 0;
  std::optional<JsonSyntaxError> error_;
};

}  // namespace

JsonScan scanJsonStream(std::string_view text, std::size_t maxDepth) { return Scanner(text, maxDepth).run(); }

}  // namespace kdesched::api
