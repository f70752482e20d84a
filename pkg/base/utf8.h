// UTF-8 checks for text that leaves the process (logs, JSON output): Kubernetes names are ASCII,
// but label values, messages from the API server and policy strings may carry anything.
#pragma once

#include <string>
#include <string_view>

namespace kdesched::utf8 {

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when it is not one (overlong
// forms, surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
std::size_t sequenceLength(std::string_view s, std::size_t i);

bool valid(std::string_view s);

// `s` with every invalid sequence replaced by U+FFFD.
std::string sanitize(std::string_view s);

}  // namespace kdesched::utf8
