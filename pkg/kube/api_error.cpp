#include "pkg/kube/api_error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "pkg/kube/wire_proto.h"

namespace kdesched::kube {

std::string ApiError::describe() const {
  if (code == 0) {
    if (cancelled) return "cancelled: " + message;
    return (reason.empty() ? std::string("no response") : reason) + ": " + message;
  }
  std::string out = std::to_string(code);
  if (!reason.empty()) out += " " + reason;
  if (!message.empty()) out += ": " + message;
  return out;
}

bool ApiError::hasCause(std::string_view causeReason) const {
  return std::any_of(causes.begin(), causes.end(), [&](const StatusCause& c) { return c.reason == causeReason; });
}

namespace {

using nlohmann::json;

std::string stringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Fills `e` from a decoded metav1.Status; false when `doc` is not one.
bool fillFromStatus(const json& doc, ApiError& e) {
  if (!doc.is_object() || stringField(doc, "kind") != "Status") return false;
  e.message = stringField(doc, "message");
  if (std::string r = stringField(doc, "reason"); !r.empty()) e.reason = std::move(r);
  if (auto it = doc.find("code"); it != doc.end() && it->is_number_integer()) e.code = it->get<int>();
  auto details = doc.find("details");
  if (details != doc.end() && details->is_object()) {
    if (auto causes = details->find("causes"); causes != details->end() && causes->is_array()) {
      for (const auto& c : *causes) {
        if (!c.is_object()) continue;
        e.causes.push_back({stringField(c, "reason"), stringField(c, "message"), stringField(c, "field")});
      }
    }
    if (auto ra = details->find("retryAfterSeconds"); ra != details->end() && ra->is_number_integer()) {
      e.retryAfter = std::chrono::seconds(ra->get<std::int64_t>());
    }
  }
  return true;
}

// The start of a body that is not a Status (an HTML error page from a proxy, say), printable.
std::string excerpt(std::string_view body) {
  std::string out;
  for (char ch : body.substr(0, 200)) out.push_back(std::isprint(static_cast<unsigned char>(ch)) ? ch : ' ');
  if (body.size() > 200) out += "...";
  return out;
}

}  // namespace

ApiError decodeStatusJson(std::string_view text) {
  ApiError e;
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!fillFromStatus(doc, e)) e.message = "not a Status object: " + excerpt(text);
  return e;
}

ApiError apiErrorFromResponse(int status, std::string_view httpReason, const Headers& headers, std::string_view body) {
  ApiError e;
  // A client that accepts protobuf gets its errors in protobuf too (the Status is negotiated as any
  // object is); the magic tells, whatever the Content-Type says.
  if (hasProtobufMagic(body)) {
    if (!decodeStatusProto(body, e)) e.message = excerpt(body);
  } else {
    const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!fillFromStatus(doc, e)) e.message = excerpt(body);
  }
  // The HTTP status is authoritative: a Status body may omit or disagree with it.
  e.code = status;
  if (e.reason.empty()) e.reason = std::string(httpReason);
  // Retry-After in seconds (what APF sends); an HTTP-date form is ignored.
  const std::string ra = findHeader(headers, "Retry-After");
  std::int64_t seconds = 0;
  if (!ra.empty()) {
    auto [ptr, ec] = std::from_chars(ra.data(), ra.data() + ra.size(), seconds);
    if (ec == std::errc() && ptr == ra.data() + ra.size() && seconds >= 0) e.retryAfter = std::chrono::seconds(seconds);
  }
  return e;
}

}  // namespace kdesched::kube
