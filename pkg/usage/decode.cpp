#include "pkg/usage/decode.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pkg/api/detail/json_reader.h"
#include "pkg/api/detail/ondemand.h"
#include "pkg/usage/detail/ondemand.h"

namespace kdesched::usage {
namespace {

using namespace api::detail;  // NOLINT(google-build-using-namespace): the JSON reader's vocabulary

// How many notes a reading keeps before it only counts: a query answering every node twice must
// not print five thousand lines.
constexpr std::size_t kMaxNotes = 20;

void note(SourceReadings& out, std::string line) {
  if (out.notes.size() < kMaxNotes) out.notes.push_back(std::move(line));
}

Status readTakenAt(Ctx& c, od::value& v, api::Timestamp& out) {
  std::optional<api::Timestamp> t;
  KD_TRY(readTimestamp(c, v, t));
  out = t.value_or(0);
  return Status::ok();
}

// Go's strconv.ParseFloat, as Prometheus' client reads a sample value: a number, NaN or ±Inf.
std::optional<double> parseSampleValue(std::string_view text) {
  if (text == "NaN") return std::nan("");
  if (text == "+Inf" || text == "Inf") return HUGE_VAL;
  if (text == "-Inf") return -HUGE_VAL;
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

struct PromSample {
  std::optional<std::string> instance;
  std::optional<double> value;
  double at = 0;
};

Status decodePromSample(Ctx& c, od::value& v, PromSample& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "metric") {
      return forEachField(c, f, [&](std::string_view label, od::value& lv) -> Status {
        if (label != "instance") return Status::ok();
        std::string s;
        KD_TRY(readString(c, lv, s));
        out.instance = std::move(s);
        return Status::ok();
      });
    }
    if (key != "value") return Status::ok();
    std::size_t i = 0;
    return forEachElement(c, f, [&](od::value& e) -> Status {
      if (i++ == 0) {
        if (e.get_double().get(out.at) != simdjson::SUCCESS) return c.fail("expected the evaluation time, a number");
        return Status::ok();
      }
      std::string_view text;
      KD_TRY(readString(c, e, text));
      out.value = parseSampleValue(text);
      if (!out.value) return c.fail("not a sample value: \"" + std::string(text) + "\"");
      return Status::ok();
    });
  });
}

Status addPromSample(const PromSample& s, SourceReadings& out) {
  if (!s.instance) return Status::error("the collected metrics sample is missing 'instance' key");
  if (!s.value) return Status::error("the collected metrics sample for \"" + *s.instance + "\" has no value");
  const double v = *s.value;
  // Upstream's check is `v < 0 || v > 1`, which a NaN passes: kdesched keeps it, and the plugin
  // leaves the node out rather than reading NaN·100 as a percentage.
  if (v < 0 || v > 1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return Status::error("the collected metrics sample for \"" + *s.instance + "\" has value " + buf +
                         " outside of <0; 1> interval");
  }
  api::Symbol node(*s.instance);
  auto [it, fresh] = out.nodes.try_emplace(node);
  if (!fresh) {
    it->second.score = std::nan("");
    note(out, "the query answered instance \"" + *s.instance + "\" more than once; that node is left out");
    return Status::ok();
  }
  it->second.score = v;
  it->second.takenAt = static_cast<api::Timestamp>(std::floor(s.at));
  return Status::ok();
}

// `data`, whatever the order of its fields (Prometheus writes resultType first; a file edited by
// hand may not).
Status decodePromData(Ctx& c, od::value& v, SourceReadings& out) {
  od::object data;
  if (v.get_object().get(data) != simdjson::SUCCESS) return c.fail("expected {resultType, result}");
  std::string resultType;
  {
    auto field = data.find_field_unordered("resultType");
    if (field.error() == simdjson::SUCCESS) {
      od::value rt = field.value_unsafe();
      At at(c, "resultType");
      KD_TRY(readString(c, rt, resultType));
    } else if (field.error() != simdjson::NO_SUCH_FIELD) {
      return c.failJson(field.error());
    }
  }
  if (resultType != "vector")
    return Status::error("expected query results to be of type \"vector\", got \"" + resultType + "\" instead");
  if (auto e = data.reset().error()) return c.failJson(e);
  auto result = data.find_field_unordered("result");
  if (result.error() == simdjson::NO_SUCH_FIELD) return Status::ok();
  if (result.error() != simdjson::SUCCESS) return c.failJson(result.error());
  od::value list = result.value_unsafe();
  At at(c, "result");
  return forEachElement(c, list, [&](od::value& e) -> Status {
    PromSample s;
    KD_TRY(decodePromSample(c, e, s));
    return addPromSample(s, out);
  });
}

}  // namespace

namespace detail {

Status decodeNodeMetrics(od::object obj, NodeMetricsItem& out) {
  return guarded([&]() -> Status {
    Ctx c;
    MetaTargets meta;
    meta.name = &out.name;
    return forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "timestamp") return readTakenAt(c, v, out.sample.takenAt);
      if (key != "usage") return Status::ok();
      api::ResourceList usage;
      KD_TRY(readResourceList(c, v, usage));
      // A saturated reading (beyond int64 milli-units, api::kSaturatedMilli) is no figure to decide
      // on: the resource is left unknown, as if the node reported none.
      const std::int64_t cpu = usage.get(api::kCpu()), memory = usage.get(api::kMemory());
      if (usage.has(api::kCpu()) && !api::isSaturated(cpu)) out.sample.cpuMilli = cpu;
      // Quantity.Value() rounds up, as the milli form does.
      if (usage.has(api::kMemory()) && !api::isSaturated(memory))
        out.sample.memoryBytes = memory / 1000 + (memory % 1000 != 0);
      return Status::ok();
    });
  });
}

Status decodePodMetrics(od::object obj, PodMetricsItem& out) {
  return guarded([&]() -> Status {
    Ctx c;
    MetaTargets meta;
    meta.name = &out.name;
    api::Symbol ns;
    meta.ns = &ns;
    bool complete = true;
    std::int64_t cpu = 0, memory = 0;
    Status st = forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "timestamp") return readTakenAt(c, v, out.takenAt);
      if (key != "containers") return Status::ok();
      return forEachElement(c, v, [&](od::value& e) -> Status {
        return forEachField(c, e, [&](std::string_view k, od::value& f) -> Status {
          if (k != "usage") return Status::ok();
          api::ResourceList usage;
          KD_TRY(readResourceList(c, f, usage));
          const std::int64_t c1 = usage.get(api::kCpu()), m1 = usage.get(api::kMemory());
          // A saturated reading makes the pod's usage unknown, as a missing one does.
          complete = complete && usage.has(api::kCpu()) && usage.has(api::kMemory()) && !api::isSaturated(c1) &&
                     !api::isSaturated(m1);
          cpu = api::addSaturating(cpu, c1);
          memory = api::addSaturating(memory, m1 / 1000 + (m1 % 1000 != 0));
          return Status::ok();
        });
      });
    });
    out.ns = ns.str();  // set on errors too: they name the pod
    KD_TRY(st);
    if (complete) {
      out.cpuMilli = cpu;
      out.memoryBytes = memory;
    }
    return Status::ok();
  });
}

void add(NodeMetricsItem item, SourceReadings& out) { out.nodes[api::Symbol(item.name)] = item.sample; }

void add(const PodMetricsItem& item, SourceReadings& out) {
  if (!out.podsTakenAt || item.takenAt < *out.podsTakenAt) out.podsTakenAt = item.takenAt;
  if (!item.cpuMilli || !item.memoryBytes) {
    note(out, "PodMetrics " + item.ns + "/" + item.name +
                  ": a container reports no cpu or memory usage; the pod's usage is unknown");
    return;
  }
  out.pods.add(item.ns, item.name, *item.cpuMilli, *item.memoryBytes);
}

}  // namespace detail

namespace {

// Parses `json` (with `reused`'s buffers when given) and hands its root object to `fn`; the errors
// of a text that is not JSON or whose root is not an object are the same for every answer.
template <typename Fn>
Status withRootObject(std::string_view json, api::JsonParser* reused, std::string_view expected, Fn&& fn) {
  simdjson::padded_string padded(json);
  od::parser local;
  od::parser& parser = reused ? reused->impl().parser : local;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc))
    return Status::error(std::string("not valid JSON: ") + simdjson::error_message(e));
  return guarded([&]() -> Status {
    od::object root;
    if (doc.get_object().get(root) != simdjson::SUCCESS) return Status::error("expected " + std::string(expected));
    return fn(root);
  });
}

}  // namespace

Status addMetricsList(std::string_view json, SourceReadings& out, api::JsonParser* reused, std::string* continueToken,
                      std::size_t* items) {
  if (continueToken) continueToken->clear();
  return withRootObject(json, reused, "a NodeMetricsList or PodMetricsList object", [&](od::object& root) -> Status {
    std::string kind;
    Ctx c;
    return forEachField(c, root, [&](std::string_view key, od::value& v) -> Status {
      if (key == "kind") return readString(c, v, kind);
      if (key == "metadata" && continueToken) {
        At at(c, "metadata");
        return forEachField(c, v, [&](std::string_view k, od::value& f) -> Status {
          if (k != "continue") return Status::ok();
          At atContinue(c, "continue");
          return readString(c, f, *continueToken);
        });
      }
      if (key != "items") return Status::ok();
      if (kind != "NodeMetricsList" && kind != "PodMetricsList")
        return c.fail("expected kind NodeMetricsList or PodMetricsList before items, got \"" + kind + "\"");
      return forEachElement(c, v, [&](od::value& e) -> Status {
        od::object item;
        if (e.get_object().get(item) != simdjson::SUCCESS) return c.fail("must be an object");
        if (kind == "NodeMetricsList") {
          detail::NodeMetricsItem n;
          if (Status s = detail::decodeNodeMetrics(item, n); !s.isOk()) return c.fail(s.message());
          detail::add(std::move(n), out);
        } else {
          detail::PodMetricsItem p;
          if (Status s = detail::decodePodMetrics(item, p); !s.isOk()) return c.fail(s.message());
          detail::add(p, out);
        }
        if (items) ++*items;
        return Status::ok();
      });
    });
  });
}

Status decodePrometheusAnswer(std::string_view json, SourceReadings& out, api::JsonParser* reused) {
  return withRootObject(json, reused, "the JSON object a Prometheus /api/v1/query answers with",
                        [&](od::object& root) -> Status {
                          Ctx c;
                          std::string status, errorType, error;
                          bool sawData = false;
                          KD_TRY(forEachField(c, root, [&](std::string_view key, od::value& v) -> Status {
                            if (key == "status") return readString(c, v, status);
                            if (key == "errorType") return readString(c, v, errorType);
                            if (key == "error") return readString(c, v, error);
                            if (key == "warnings") {
                              return forEachElement(c, v, [&](od::value& w) -> Status {
                                std::string text;
                                KD_TRY(readString(c, w, text));
                                note(out, "prometheus metrics warnings: " + text);
                                return Status::ok();
                              });
                            }
                            if (key != "data" || status == "error") return Status::ok();
                            sawData = true;
                            return decodePromData(c, v, out);
                          }));
                          if (status == "error")
                            return Status::error("unable to capture prometheus metrics: " + errorType + ": " + error);
                          if (status != "success")
                            return Status::error("status: expected \"success\" or \"error\", got \"" + status + "\"");
                          if (!sawData)
                            return Status::error("data: missing; expected {resultType: vector, result: [...]}");
                          return Status::ok();
                        });
}

}  // namespace kdesched::usage
