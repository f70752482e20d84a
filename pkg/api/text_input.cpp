#include "pkg/api/text_input.h"

#include <algorithm>
#include <cstdint>

#include "pkg/base/utf8.h"

namespace kdesched::api {
namespace {

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

// UTF-16 or UTF-32 without a byte order mark still shows itself in its first bytes: ASCII
// characters with NUL bytes between them ("{\0\"\0" or "\0{\0\"").
bool looksLikeWideText(std::string_view text) {
  if (text.size() < 4) return false;
  const bool le = text[0] != '\0' && text[1] == '\0';
  const bool be = text[0] == '\0' && text[1] != '\0';
  return le || be || (text[0] == '\0' && text[1] == '\0' && text[2] == '\0' && text[3] != '\0');
}

}  // namespace

std::string textPosition(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t lineStart = before.rfind('\n');
  const std::size_t column = offset - (lineStart == std::string_view::npos ? 0 : lineStart + 1) + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

Result<std::string_view> checkTextEncoding(std::string_view text, std::string_view what) {
  const std::string convert =
      ": convert it to UTF-8 (iconv -f UTF-16 -t UTF-8 FILE; in PowerShell, Out-File -Encoding utf8)";
  if (startsWith(text, std::string_view("\xFF\xFE\0\0", 4)) || startsWith(text, std::string_view("\0\0\xFE\xFF", 4)))
    return Status::error("the file is UTF-32 text" + convert);
  if (startsWith(text, "\xFF\xFE") || startsWith(text, "\xFE\xFF") || looksLikeWideText(text))
    return Status::error("the file is UTF-16 text" + convert);
  if (startsWith(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
    return Status::error("binary data (a NUL byte at " + textPosition(text, nul) + "): expected " + std::string(what));
  return text;
}

Status checkTextStart(std::string_view head, std::string_view what) {
  const bool utf32le = startsWith(head, std::string_view("\xFF\xFE\0\0", 4));
  if ((startsWith(head, "\xFF\xFE") && !utf32le) || startsWith(head, "\xFE\xFF")) return Status::ok();
  auto checked = checkTextEncoding(head, what);
  if (!checked.isOk()) return checked.status();
  const std::string_view text = *checked;
  const auto control = std::find_if(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
  });
  if (control == text.end()) return Status::ok();
  static constexpr char kHex[] = "0123456789ABCDEF";
  const auto c = static_cast<unsigned char>(*control);
  const std::string byte = {'0', 'x', kHex[c >> 4], kHex[c & 0xF]};
  return Status::error("binary data (a control byte " + byte + " at " +
                       textPosition(text, static_cast<std::size_t>(control - text.begin())) + "): expected " +
                       std::string(what));
}

std::optional<std::string> fromUtf16(std::string_view text) {
  const bool le = text.starts_with("\xFF\xFE"), be = text.starts_with("\xFE\xFF");
  if ((!le && !be) || text.starts_with(std::string_view("\xFF\xFE\0\0", 4))) return std::nullopt;
  auto unit = [&](std::size_t i) -> std::uint32_t {
    auto b = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(text[k])); };
    return le ? b(i) | b(i + 1) << 8 : b(i) << 8 | b(i + 1);
  };
  std::string out;
  for (std::size_t i = 2; i + 1 < text.size(); i += 2) {
    std::uint32_t c = unit(i);
    if (c >= 0xD800 && c < 0xDC00 && i + 3 < text.size() && unit(i + 2) >= 0xDC00 && unit(i + 2) < 0xE000) {
      c = 0x10000 + ((c - 0xD800) << 10) + (unit(i + 2) - 0xDC00);
      i += 2;
    } else if (c >= 0xD800 && c < 0xE000) {
      return std::string();
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += {static_cast<char>(0xC0 | c >> 6), static_cast<char>(0x80 | (c & 0x3F))};
    } else if (c < 0x10000) {
      out += {static_cast<char>(0xE0 | c >> 12), static_cast<char>(0x80 | (c >> 6 & 0x3F)),
              static_cast<char>(0x80 | (c & 0x3F))};
    } else {
      out += {static_cast<char>(0xF0 | c >> 18), static_cast<char>(0x80 | (c >> 12 & 0x3F)),
              static_cast<char>(0x80 | (c >> 6 & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
    }
  }
  return out;
}

std::optional<std::size_t> firstInvalidUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8::sequenceLength(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

}  // namespace kdesched::api
