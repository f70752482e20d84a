// The protobuf wire (wire_proto.h): LIST pages, watch frames and Status errors as the API server
// writes them (apimachinery's protobuf serializer and length-delimited framer), and the client
// asking for protobuf, decoding by the answer's Content-Type, and falling back to JSON on 406/415.
#include "pkg/kube/wire_proto.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "pkg/kube/client.h"
#include "test/unit/kube/fakes.h"
#include "test/unit/testing/paths.h"
#include "test/unit/testing/proto_writer.h"

namespace kdesched::kube::testing {
namespace {

using kdesched::testing::Proto;
using ::testing::HasSubstr;

Proto podProto(const std::string& name, const std::string& rv, const std::string& cpu = "100m") {
  return Proto()
      .msg(1, Proto().str(1, name).str(3, "default").str(5, "uid-" + name).str(6, rv))
      .msg(2, Proto().msg(2, Proto().str(1, "c").msg(8, Proto().quantity(2, "cpu", cpu))).str(10, "n1"))
      .msg(3, Proto().str(1, "Running"));
}

std::string podBody(const std::string& name, const std::string& rv, const std::string& cpu = "100m") {
  return Proto::envelope("Pod", podProto(name, rv, cpu));
}

std::string podListBody(const std::vector<Proto>& items, const std::string& rv, const std::string& next = "") {
  Proto list;
  list.msg(1, Proto().str(1, "").str(2, rv).str(3, next));
  for (const auto& i : items) list.msg(2, i);
  return Proto::envelope("PodList", list);
}

std::string statusBody(int code, const std::string& reason, const std::string& message, int retryAfter = 0) {
  return Proto::envelope(
      "Status",
      Proto()
          .msg(1, Proto())
          .str(2, "Failure")
          .str(3, message)
          .str(4, reason)
          .msg(5, Proto().str(1, "").msg(4, Proto().str(1, "DisruptionBudget").str(2, "no budget")).i32(5, retryAfter))
          .i32(6, code));
}

std::string bookmarkBody(const std::string& rv, bool initialEventsEnd) {
  Proto meta;
  meta.str(1, "").str(6, rv).msg(8, Proto());
  if (initialEventsEnd) meta.entry(12, "k8s.io/initial-events-end", "true");
  return Proto::envelope("Pod", Proto().msg(1, meta).msg(2, Proto()).msg(3, Proto()));
}

std::string podName(const api::Object& o) { return std::get<api::Pod>(o).name; }

TEST(WireProto, ContentTypesAndMagic) {
  EXPECT_TRUE(isProtobufContentType("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(isProtobufContentType("application/vnd.kubernetes.protobuf;stream=watch"));
  EXPECT_TRUE(isProtobufContentType(" Application/Vnd.Kubernetes.Protobuf ; stream=watch"));
  EXPECT_FALSE(isProtobufContentType("application/json"));
  EXPECT_FALSE(isProtobufContentType(""));
  EXPECT_FALSE(isProtobufContentType("application/vnd.kubernetes.protobuf+json"));
  EXPECT_TRUE(hasProtobufMagic(podBody("a", "1")));
  EXPECT_FALSE(hasProtobufMagic("{}"));
}

TEST(WireProto, ListPage) {
  ListPage page;
  const std::string body =
      podListBody({podProto("a", "5"), podProto("broken", "6", "1x"), podProto("b", "7")}, "42", "next-token");
  ASSERT_TRUE(decodeListPageProto(api::Kind::Pod, body, page).isOk());
  ASSERT_EQ(page.objects.size(), 2u);
  EXPECT_EQ(podName(page.objects[0]), "a");
  EXPECT_EQ(podName(page.objects[1]), "b");
  EXPECT_EQ(std::get<api::Pod>(page.objects[0]).requests.get(api::Symbol("cpu")), 100);
  EXPECT_EQ(page.resourceVersion, "42");
  EXPECT_EQ(page.continueToken, "next-token");
  ASSERT_EQ(page.undecodable.size(), 1u);
  EXPECT_EQ(page.undecodable[0].key, "default/broken");
  EXPECT_EQ(page.undecodable[0].error, "spec.containers[0].resources.requests.cpu: invalid quantity \"1x\"");
}

TEST(WireProto, AnEmptyListHasNoItemsField) {
  ListPage page;
  ASSERT_TRUE(decodeListPageProto(api::Kind::Pod, podListBody({}, "9"), page).isOk());
  EXPECT_TRUE(page.objects.empty());
  EXPECT_EQ(page.resourceVersion, "9");
}

TEST(WireProto, NotAList) {
  ListPage page;
  EXPECT_THAT(decodeListPageProto(api::Kind::Pod, statusBody(500, "InternalError", "x"), page).message(),
              HasSubstr("not a list: a Status where a PodList was expected"));
  EXPECT_THAT(decodeListPageProto(api::Kind::Pod, "{\"items\":[]}", page).message(), HasSubstr("k8s\\0"));
  const std::string cut = podListBody({podProto("a", "5")}, "42");
  EXPECT_THAT(decodeListPageProto(api::Kind::Pod, cut.substr(0, cut.size() - 3), page).message(),
              HasSubstr("malformed protobuf"));
}

TEST(WireProto, WatchEvents) {
  WatchEvent ev;
  std::string frame = Proto::frame("ADDED", podBody("a", "11")).substr(4);
  ASSERT_TRUE(decodeWatchEventProto(api::Kind::Pod, frame, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Added);
  EXPECT_EQ(ev.resourceVersion, "11");
  EXPECT_EQ(podName(ev.object), "a");

  frame = Proto::frame("DELETED", podBody("b", "12", "-1")).substr(4);
  ASSERT_TRUE(decodeWatchEventProto(api::Kind::Pod, frame, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Deleted);
  ASSERT_TRUE(ev.undecodable.has_value()) << "well-formed, but its object does not decode";
  EXPECT_EQ(ev.undecodable->key, "default/b");
  EXPECT_THAT(ev.undecodable->error, HasSubstr("negative quantity for cpu"));

  frame = Proto::frame("BOOKMARK", bookmarkBody("13", false)).substr(4);
  ASSERT_TRUE(decodeWatchEventProto(api::Kind::Pod, frame, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Bookmark);
  EXPECT_EQ(ev.resourceVersion, "13");
  EXPECT_FALSE(ev.initialEventsEnd);

  frame = Proto::frame("BOOKMARK", bookmarkBody("14", true)).substr(4);
  ASSERT_TRUE(decodeWatchEventProto(api::Kind::Pod, frame, ev).isOk());
  EXPECT_TRUE(ev.initialEventsEnd);
  EXPECT_EQ(ev.resourceVersion, "14");

  frame = Proto::frame("ERROR", statusBody(410, "Expired", "too old resource version: 5 (10)")).substr(4);
  ASSERT_TRUE(decodeWatchEventProto(api::Kind::Pod, frame, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Error);
  EXPECT_TRUE(ev.error.isGone());
  EXPECT_EQ(ev.error.reason, "Expired");
  EXPECT_EQ(ev.error.message, "too old resource version: 5 (10)");
  EXPECT_FALSE(ev.error.retryAfter.has_value()) << "a zero retryAfterSeconds is no hint, as JSON leaves it out";
}

TEST(WireProto, MalformedWatchEvents) {
  WatchEvent ev;
  auto fails = [&](const std::string& frame) { return decodeWatchEventProto(api::Kind::Pod, frame, ev).message(); };
  EXPECT_THAT(fails(Proto::frame("RENAMED", podBody("a", "1")).substr(4)), HasSubstr("unknown watch event type"));
  EXPECT_THAT(fails(Proto().str(1, "ADDED").bytes()), HasSubstr("object: missing"));
  EXPECT_THAT(fails(Proto().msg(2, Proto().str(1, podBody("a", "1"))).bytes()), HasSubstr("type: missing"));
  // A frame wrapped as a body (magic and Unknown) is not what the API server sends.
  EXPECT_THAT(fails(Proto::envelope("WatchEvent", Proto().str(1, "ADDED"))), HasSubstr("malformed protobuf"));
  const std::string noRv = Proto::envelope("Pod", Proto().msg(1, Proto().str(1, "a")));
  EXPECT_THAT(fails(Proto::frame("ADDED", noRv).substr(4)), HasSubstr("object.metadata.resourceVersion: missing"));
  EXPECT_THAT(fails(Proto::frame("ADDED", "{}").substr(4)), HasSubstr("object: not a protobuf object"));
}

TEST(WireProto, StatusErrors) {
  ApiError e = apiErrorFromResponse(429, "Too Many Requests", {{"Retry-After", "3"}},
                                    statusBody(429, "TooManyRequests", "Cannot evict pod", 10));
  EXPECT_EQ(e.code, 429);
  EXPECT_EQ(e.reason, "TooManyRequests");
  EXPECT_EQ(e.message, "Cannot evict pod");
  EXPECT_TRUE(e.hasCause("DisruptionBudget"));
  EXPECT_EQ(e.retryAfter, std::chrono::seconds(3)) << "the header wins";
  e = apiErrorFromResponse(403, "Forbidden", {}, statusBody(403, "Forbidden", "pods is forbidden", 10));
  EXPECT_EQ(e.retryAfter, std::chrono::seconds(10));
  e = apiErrorFromResponse(500, "Internal Server Error", {}, std::string("k8s\0garbage", 11));
  EXPECT_EQ(e.code, 500);
  EXPECT_EQ(e.reason, "Internal Server Error");
  EXPECT_THAT(e.message, HasSubstr("garbage"));
}

// ---------------------------------------------------------------------------------------------
// The client.

class ProtoClientTest : public ::testing::Test {
 protected:
  ProtoClientTest() { makeClient(true); }

  void makeClient(bool protobuf) {
    ClientConfig cfg;
    cfg.server = "https://api:6443";
    cfg.qps = -1;
    cfg.requestTimeout = {};
    cfg.protobuf = protobuf;
    auto t = std::make_unique<FakeTransport>();
    transport_ = t.get();
    client_ = std::make_unique<Client>(std::move(cfg), std::move(t), std::make_shared<FakeClock>());
  }

  static Scripted protobuf(std::string body, int status = 200) {
    Scripted s = Scripted::json(std::move(body), status);
    s.headers = {{"Content-Type", std::string(kProtobufMediaType)}};
    return s;
  }

  FakeTransport* transport_ = nullptr;
  std::unique_ptr<Client> client_;
};

TEST_F(ProtoClientTest, PodsAreListedInProtobufAcrossPages) {
  transport_->onSend(protobuf(podListBody({podProto("a", "1")}, "", "tok")));
  transport_->onSend(protobuf(podListBody({podProto("b", "2")}, "20")));
  auto listed = client_->list(kPods, {});
  ASSERT_TRUE(listed.isOk()) << listed.error().describe();
  ASSERT_EQ(listed->objects.size(), 2u);
  EXPECT_EQ(listed->resourceVersion, "20");
  EXPECT_TRUE(listed->protobuf);
  EXPECT_EQ(listed->pages, 2);
  const auto sent = transport_->sent();
  EXPECT_EQ(findHeader(sent[0].headers, "Accept"), "application/vnd.kubernetes.protobuf, application/json");
  EXPECT_EQ(listed->bytes,
            podListBody({podProto("a", "1")}, "", "tok").size() + podListBody({podProto("b", "2")}, "20").size());
}

TEST_F(ProtoClientTest, AJsonAnswerIsReadAsJson) {
  transport_->onSend(Scripted::json(podList({podJson("a", "1")}, "7")));
  auto listed = client_->list(kPods, {});
  ASSERT_TRUE(listed.isOk()) << listed.error().describe();
  EXPECT_EQ(podName(listed->objects.at(0)), "a");
  EXPECT_FALSE(listed->protobuf);
}

TEST_F(ProtoClientTest, OtherKindsAndTheOptOutAskForJson) {
  transport_->onSend(Scripted::json(R"({"kind":"NamespaceList","metadata":{"resourceVersion":"1"},"items":[]})"));
  ASSERT_TRUE(client_->list(kNamespaces, {}).isOk());
  EXPECT_EQ(findHeader(transport_->sent()[0].headers, "Accept"), "application/json");
  makeClient(false);
  transport_->onSend(Scripted::json(podList({}, "7")));
  ASSERT_TRUE(client_->list(kPods, {}).isOk());
  EXPECT_EQ(findHeader(transport_->sent()[0].headers, "Accept"), "application/json");
}

TEST_F(ProtoClientTest, A406FallsBackToJsonForGood) {
  transport_->onSend(Scripted::json(statusJson(406, "NotAcceptable", "only application/json"), 406));
  transport_->onSend(Scripted::json(podList({podJson("a", "1")}, "7")));
  transport_->onSend(Scripted::json(podList({}, "8")));
  auto listed = client_->list(kPods, {});
  ASSERT_TRUE(listed.isOk()) << listed.error().describe();
  EXPECT_EQ(listed->objects.size(), 1u);
  ASSERT_TRUE(client_->list(kPods, {}).isOk());
  const auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(findHeader(sent[1].headers, "Accept"), "application/json");
  EXPECT_EQ(findHeader(sent[2].headers, "Accept"), "application/json") << "the refusal is remembered";
}

TEST_F(ProtoClientTest, A415OnTheWatchFallsBackToJson) {
  Scripted refused;
  refused.status = 415;
  refused.body = statusJson(415, "UnsupportedMediaType", "no");
  refused.end = Scripted::End::Close;
  transport_->onWatch(refused);
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "11"))}, Scripted::End::Close));
  auto w = client_->watch(kPods, {});
  ASSERT_TRUE(w.isOk()) << w.error().describe();
  const auto seen = transport_->watched();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(findHeader(seen[0].headers, "Accept"), "application/vnd.kubernetes.protobuf, application/json");
  EXPECT_EQ(findHeader(seen[1].headers, "Accept"), "application/json");
  WatchEvent ev;
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_EQ(podName(ev.object), "a");
}

TEST_F(ProtoClientTest, AProtobufErrorIsDecoded) {
  transport_->onSend(protobuf(statusBody(403, "Forbidden", "pods is forbidden: User \"x\" cannot list"), 403));
  auto listed = client_->list(kPods, {});
  ASSERT_FALSE(listed.isOk());
  EXPECT_EQ(listed.error().code, 403);
  EXPECT_EQ(listed.error().message, "pods is forbidden: User \"x\" cannot list");
}

Scripted protobufWatch(std::vector<std::string> chunks, Scripted::End end) {
  Scripted s = Scripted::watch(std::move(chunks), end);
  s.headers = {{"Content-Type", "application/vnd.kubernetes.protobuf;stream=watch"}};
  return s;
}

// Frames arrive in pieces that do not line up with them, as HTTP chunks do.
TEST_F(ProtoClientTest, WatchFramesAcrossChunks) {
  const std::string stream = Proto::frame("ADDED", podBody("a", "11")) +
                             Proto::frame("BOOKMARK", bookmarkBody("12", true)) +
                             Proto::frame("MODIFIED", podBody("a", "13"));
  std::vector<std::string> chunks;
  for (std::size_t i = 0; i < stream.size(); i += 7) chunks.push_back(stream.substr(i, 7));
  transport_->onWatch(protobufWatch(chunks, Scripted::End::Close));
  WatchOptions wo;
  wo.sendInitialEvents = true;
  auto w = client_->watch(kPods, wo);
  ASSERT_TRUE(w.isOk()) << w.error().describe();
  EXPECT_EQ(findHeader(transport_->watched()[0].headers, "Accept"),
            "application/vnd.kubernetes.protobuf, application/json");
  WatchEvent ev;
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_EQ(ev.type, WatchEventType::Added);
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_TRUE(ev.initialEventsEnd);
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_EQ(ev.type, WatchEventType::Modified);
  EXPECT_EQ(ev.resourceVersion, "13");
  EXPECT_EQ((*w)->next(ev), WatchStream::Next::Closed);
  EXPECT_TRUE((*w)->protobuf());
  EXPECT_EQ((*w)->bytes(), stream.size());
}

TEST_F(ProtoClientTest, ATruncatedFrameBreaksTheStream) {
  const std::string frame = Proto::frame("ADDED", podBody("a", "11"));
  transport_->onWatch(protobufWatch({frame, frame.substr(0, frame.size() - 5)}, Scripted::End::Close));
  auto w = client_->watch(kPods, {});
  ASSERT_TRUE(w.isOk());
  WatchEvent ev;
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_EQ((*w)->next(ev), WatchStream::Next::Broken);
  EXPECT_THAT((*w)->problem(), HasSubstr("the stream ended inside a frame"));

  transport_->onWatch(protobufWatch({std::string("\x00\x00", 2)}, Scripted::End::Close));
  w = client_->watch(kPods, {});
  ASSERT_TRUE(w.isOk());
  EXPECT_EQ((*w)->next(ev), WatchStream::Next::Broken);
  EXPECT_THAT((*w)->problem(), HasSubstr("inside a frame's length"));
}

TEST_F(ProtoClientTest, ACorruptFrameIsMalformed) {
  transport_->onWatch(protobufWatch({std::string("\xff\xff\xff\xff", 4)}, Scripted::End::Close));
  auto w = client_->watch(kPods, {});
  ASSERT_TRUE(w.isOk());
  WatchEvent ev;
  EXPECT_EQ((*w)->next(ev), WatchStream::Next::Malformed);
  EXPECT_THAT((*w)->problem(), HasSubstr("the stream is corrupt"));
  const std::string bad = Proto::frame("ADDED", "garbage");
  transport_->onWatch(protobufWatch({bad}, Scripted::End::Close));
  w = client_->watch(kPods, {});
  ASSERT_TRUE(w.isOk());
  EXPECT_EQ((*w)->next(ev), WatchStream::Next::Malformed);
  EXPECT_THAT((*w)->problem(), HasSubstr("protobuf frame of"));
}

}  // namespace
}  // namespace kdesched::kube::testing

namespace kdesched::kube::testing {
namespace {

std::string seed(const std::string& path) {
  std::ifstream in(std::string(kdesched::testing::sourceDir()) + "/test/fuzz/seeds/" + path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fuzzers' seeds (written by hand in Python) are what the decoders read whole, so the fuzzers
// start from deep inside them.
TEST(WireProto, TheFuzzSeedsDecode) {
  ListPage page;
  ASSERT_TRUE(decodeListPageProto(api::Kind::Pod, seed("protobuf_list/pods.bin"), page).isOk());
  ASSERT_EQ(page.objects.size(), 2u);
  EXPECT_TRUE(page.undecodable.empty());
  const api::Pod& pod = std::get<api::Pod>(page.objects[0]);
  EXPECT_EQ(pod.key(), "default/a");
  EXPECT_EQ(pod.requests.toString(), "cpu=160m,memory=64Mi");
  const std::string stream = seed("protobuf_watch/stream.bin");
  std::vector<WatchEventType> types;
  for (std::size_t at = 0; at + 4 <= stream.size();) {
    const auto* b = reinterpret_cast<const unsigned char*>(stream.data() + at);
    const std::size_t n = (std::size_t{b[0]} << 24) | (std::size_t{b[1]} << 16) | (std::size_t{b[2]} << 8) | b[3];
    WatchEvent ev;
    ASSERT_TRUE(decodeWatchEventProto(api::Kind::Pod, std::string_view(stream).substr(at + 4, n), ev).isOk());
    EXPECT_FALSE(ev.undecodable.has_value());
    types.push_back(ev.type);
    at += 4 + n;
  }
  EXPECT_EQ(types,
            (std::vector<WatchEventType>{WatchEventType::Added, WatchEventType::Bookmark, WatchEventType::Modified,
                                         WatchEventType::Deleted, WatchEventType::Error}));
}

}  // namespace
}  // namespace kdesched::kube::testing
