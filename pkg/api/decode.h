// Decoding Kubernetes objects from API-server JSON straight into the compact model: one streaming
// pass of an on-demand parser, no DOM. This header names no JSON library, so other headers can
// include it; the decoders typed on the parser's values are in pkg/api/detail/ondemand.h, for the
// .cpp files that read LIST pages, WATCH lines and snapshot files.
#pragma once

#include <memory>
#include <string_view>

#include "pkg/api/object.h"
#include "pkg/base/status.h"

namespace kdesched::api {

// A reusable on-demand parser: it keeps its buffers from one document to the next, so a watch
// stream decodes line after line without allocating. One per reader; not thread-safe.
class JsonParser {
 public:
  JsonParser();
  ~JsonParser();
  JsonParser(JsonParser&&) noexcept;
  JsonParser& operator=(JsonParser&&) noexcept;

  struct Impl;  // the parser itself (pkg/api/detail/ondemand.h)
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One object in a JSON text whose "kind" field names its kind. Unknown kind → error. Errors look
// like `Pod: spec.containers[0].resources.requests.cpu: invalid quantity "12x"`.
Result<Object> decodeObjectJson(std::string_view json);

}  // namespace kdesched::api
