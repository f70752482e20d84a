// A protobuf writer for tests: messages built field by field (libprotobuf's CodedOutputStream), as
// the API server writes them, for the decoders of pkg/api/pod_proto.cpp and pkg/kube/wire_proto.cpp.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kdesched::testing {

class Proto {
 public:
  Proto& str(std::uint32_t field, std::string_view s) { return len(field, s); }
  Proto& msg(std::uint32_t field, const Proto& m) { return len(field, m.bytes_); }
  Proto& varint(std::uint32_t field, std::uint64_t v) {
    write([&](auto& out) {
      out.WriteTag(field << 3);
      out.WriteVarint64(v);
    });
    return *this;
  }
  Proto& i32(std::uint32_t field, std::int32_t v) {
    return varint(field, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  }
  Proto& fixed32(std::uint32_t field, std::uint32_t v) {
    write([&](auto& out) {
      out.WriteTag((field << 3) | 5);
      out.WriteLittleEndian32(v);
    });
    return *this;
  }
  Proto& fixed64(std::uint32_t field, std::uint64_t v) {
    write([&](auto& out) {
      out.WriteTag((field << 3) | 1);
      out.WriteLittleEndian64(v);
    });
    return *this;
  }
  // A map<string, string> entry.
  Proto& entry(std::uint32_t field, std::string_view key, std::string_view value) {
    return msg(field, Proto().str(1, key).str(2, value));
  }
  // A map<string, resource.Quantity> entry.
  Proto& quantity(std::uint32_t field, std::string_view name, std::string_view q) {
    return msg(field, Proto().str(1, name).msg(2, Proto().str(1, q)));
  }
  // A metav1.Time.
  Proto& time(std::uint32_t field, std::int64_t seconds) {
    return msg(field, Proto().varint(1, static_cast<std::uint64_t>(seconds)));
  }
  Proto& raw(std::string_view bytes) {
    bytes_ += bytes;
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

  // "k8s\0" and a runtime.Unknown around `object` of `kind`, as the API server sends a body.
  static std::string envelope(std::string_view kind, const Proto& object, std::string_view apiVersion = "v1") {
    return std::string("k8s\0", 4) +
           Proto().msg(1, Proto().str(1, apiVersion).str(2, kind)).str(2, object.bytes()).str(3, "").str(4, "").bytes();
  }
  // One watch frame: 4-byte big-endian length, then a bare WatchEvent (no magic, no Unknown: the
  // API server's stream serializer is the raw one) whose object is a body, magic and Unknown.
  static std::string frame(std::string_view type, const std::string& objectBody) {
    const std::string body = Proto().str(1, type).msg(2, Proto().str(1, objectBody)).bytes();
    const auto n = static_cast<std::uint32_t>(body.size());
    std::string out{char(n >> 24), char((n >> 16) & 0xff), char((n >> 8) & 0xff), char(n & 0xff)};
    return out + body;
  }

 private:
  Proto& len(std::uint32_t field, std::string_view s) {
    write([&](auto& out) {
      out.WriteTag((field << 3) | 2);
      out.WriteVarint32(static_cast<std::uint32_t>(s.size()));
      out.WriteRaw(s.data(), static_cast<int>(s.size()));
    });
    return *this;
  }
  template <typename F>
  void write(F&& f) {
    google::protobuf::io::StringOutputStream stream(&bytes_);
    google::protobuf::io::CodedOutputStream out(&stream);
    f(out);
  }

  std::string bytes_;
};

}  // namespace kdesched::testing
