// Strict JSON syntax for snapshot files, checked before the on-demand decoder reads them. The
// decoder only looks at the fields it needs: a broken value inside a field it skips passed
// unnoticed, its errors carry no position, and after the first document of `cat a.json b.json`
// it stopped reading without a word. This scanner reads every byte once (RFC 8259: no comments,
// no trailing commas, strings in UTF-8 with their control characters escaped), bounds the
// nesting, and splits a stream of concatenated documents.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kdesched::api {

// Deeper nesting is refused (no Kubernetes object comes near it; yaml-cpp's limit is the same).
inline constexpr std::size_t kMaxJsonDepth = 500;

struct JsonSpan {
  std::size_t begin = 0;  // offset of the document's first byte
  std::size_t end = 0;    // one past its last byte
};

// Where a scan stopped and why; `offset` indexes the scanned text.
struct JsonSyntaxError {
  std::size_t offset = 0;
  std::string message;        // "expected ',' or '}' after an object member, found 'x'"
  bool unquotedWord = false;  // it found a bare word where a key or value goes: YAML flow style?
};

// A document's list of items, so that a loader can decode one item at a time instead of the whole
// document at once: the elements of the root array, or of the array under the root object's first
// "items" key (a v1 List). `found` is false when the document has neither.
struct JsonItems {
  bool found = false;
  JsonSpan array;                  // from its '[' to one past its ']'
  std::vector<JsonSpan> elements;  // each element, without the whitespace and commas around it
};

// The documents of a JSON text: one or more objects or arrays, separated by whitespace only.
// Nothing but whitespace is an empty list.
struct JsonScan {
  std::vector<JsonSpan> documents;
  std::vector<JsonItems> items;  // one per document
  std::optional<JsonSyntaxError> error;
};
JsonScan scanJsonStream(std::string_view text, std::size_t maxDepth = kMaxJsonDepth);

}  // namespace kdesched::api
