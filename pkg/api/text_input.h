// Checks every text input (snapshot, policy) gets before a parser sees it, so that the wrong
// encoding is named as such instead of surfacing as a parser's puzzle ("unknown escape
// character", "binary data").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/base/status.h"

namespace kdesched::api {

// "line 3, column 14": 1-based, columns counted in bytes (as yaml-cpp counts them).
std::string textPosition(std::string_view text, std::size_t offset);

// `text` without a leading UTF-8 byte order mark (editors on Windows write one; YAML allows it),
// or an error for text that is not UTF-8 at all: UTF-16 or UTF-32 (a byte order mark, or the NUL
// bytes between ASCII characters that a PowerShell `>` leaves) and binary data (a NUL byte,
// named by line and column). `what` names the expected content: "JSON or YAML".
Result<std::string_view> checkTextEncoding(std::string_view text, std::string_view what);

// For a reader that has only the first bytes of a text: the error checkTextEncoding gives when
// those bytes already decide it, and one for a control character other than tab, CR and LF, which
// neither JSON nor YAML allows anywhere (what random binary data shows within a few bytes). OK for
// UTF-16 with a byte order mark, which fromUtf16 reads once the whole text is there.
Status checkTextStart(std::string_view head, std::string_view what);

// UTF-16 text with a byte order mark (what PowerShell's `>` writes) as UTF-8, as upstream's YAML
// parser reads a policy; nullopt when the text is not UTF-16 with a BOM (UTF-32's BOM starts like
// UTF-16LE's and is not UTF-16). An unpaired surrogate gives "" (an error upstream too).
std::optional<std::string> fromUtf16(std::string_view text);

// The offset of the first byte that does not start a valid UTF-8 sequence, if any.
std::optional<std::size_t> firstInvalidUtf8(std::string_view text);

}  // namespace kdesched::api
