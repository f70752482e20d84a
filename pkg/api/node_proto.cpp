// Decoding a Node from protobuf: the fields object_decode.cpp's decodeNode reads from JSON, by their
// numbers in k8s.io/api core/v1 generated.proto (v0.36), with its checks and error texts.
#include "pkg/api/decode_proto.h"
#include "pkg/api/detail/pod_parts.h"
#include "pkg/api/detail/proto_reader.h"

namespace kdesched::api {

using namespace detail;         // NOLINT(google-build-using-namespace): this file's vocabulary
using namespace detail::proto;  // NOLINT(google-build-using-namespace)

namespace {

constexpr Fields<3> kNode{{{1, "metadata"}, {2, "spec"}, {3, "status"}}};
constexpr Fields<3> kNodeMeta{{{1, "name"}, {8, "creationTimestamp"}, {11, "labels"}}};
constexpr Fields<2> kNodeSpec{{{4, "unschedulable"}, {5, "taints"}}};
constexpr Fields<3> kTaint{{{1, "key"}, {2, "value"}, {3, "effect"}}};
constexpr Fields<3> kNodeStatus{{{1, "capacity"}, {2, "allocatable"}, {4, "conditions"}}};
constexpr Fields<2> kNodeCondition{{{1, "type"}, {2, "status"}}};

Status decodeNodeMeta(FieldPath& c, const Field& f, Node& out) {
  std::vector<Labels::Item> labels;
  bool sawLabels = false;
  KD_TRY(forEachField(c, f, kNodeMeta, [&](const Field& x) -> Status {
    if (x.number == 1) return readString(c, x, out.name);
    if (x.number == 8) return readTime(c, x, out.creationTimestamp);
    sawLabels = true;
    std::string_view key, value;
    KD_TRY(readMapEntry(c, x, key, value));
    labels.emplace_back(intern(key), intern(value));
    return Status::ok();
  }));
  if (sawLabels) out.labels = Labels::fromUnsorted(std::move(labels));
  return Status::ok();
}

}  // namespace

Status decodeNodeProto(std::string_view message, Node& out) {
  return guarded([&]() -> Status {
    out = Node{};
    FieldPath c;
    ResourceList capacity;
    KD_TRY(forEachField(c, message, kNode, [&](const Field& x) -> Status {
      if (x.number == 1) return decodeNodeMeta(c, x, out);
      if (x.number == 2) {
        return forEachField(c, x, kNodeSpec, [&](const Field& s) -> Status {
          if (s.number == 4) return readBool(c, s, out.unschedulable);
          At at(c, out.taints.size());
          Taint& taint = out.taints.emplace_back();
          bool sawEffect = false;
          KD_TRY(forEachField(c, s, kTaint, [&](const Field& t) -> Status {
            if (t.number == 1) return readString(c, t, taint.key);
            if (t.number == 2) return readString(c, t, taint.value);
            sawEffect = true;
            return readEnum(c, t, kTaintEffects, "taint effect", taint.effect);
          }));
          return sawEffect ? Status::ok() : c.fail("missing effect");
        });
      }
      return forEachField(c, x, kNodeStatus, [&](const Field& s) -> Status {
        if (s.number == 1) return addResource(c, s, capacity);
        if (s.number == 2) return addResource(c, s, out.allocatable);
        // The Ready condition's status; the last one wins, as in JSON.
        std::string_view type, status;
        KD_TRY(forEachField(c, s, kNodeCondition,
                            [&](const Field& k) { return readBytes(c, k, k.number == 1 ? type : status); }));
        if (type == "Ready") out.readyCondition = status == "True";
        return Status::ok();
      });
    }));
    if (out.allocatable.empty()) out.allocatable = std::move(capacity);
    out.nameSym = intern(out.name);
    return Status::ok();
  });
}

}  // namespace kdesched::api
