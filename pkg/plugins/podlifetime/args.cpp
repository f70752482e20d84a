#include "pkg/plugins/podlifetime/args.h"

#include <algorithm>

namespace kdesched::plugins::podlifetime {
namespace {

// Go's uint: a negative number does not decode.
Status readSeconds(policy::ArgsReader& r, std::string_view key, std::optional<std::uint64_t>& out) {
  std::optional<std::int64_t> v;
  KD_TRY(r.readInt64(key, v));
  if (v && *v < 0) return r.error(key, "must be a non-negative integer, got " + std::to_string(*v));
  if (v) out = static_cast<std::uint64_t>(*v);
  return Status::ok();
}

std::string joinedStates() {
  std::string out = "[";
  for (const auto& s : allowedStates()) out += (out.size() > 1 ? " " : "") + s;
  return out + "]";
}

Status readConditions(policy::ArgsReader& r, std::vector<ConditionFilter>& out) {
  return r.readObjectList("conditions", [&](policy::ArgsReader& cr, std::size_t) -> Status {
    std::optional<std::string> type, status, reason;
    ConditionFilter f;
    KD_TRY(cr.readString("type", type));
    KD_TRY(cr.readString("status", status));
    KD_TRY(cr.readString("reason", reason));
    KD_TRY(readSeconds(cr, "minTimeSinceLastTransitionSeconds", f.minTimeSinceLastTransitionSeconds));
    KD_TRY(cr.finish());
    f.type = type.value_or("");
    f.status = status.value_or("");
    f.reason = reason.value_or("");
    if (f.type.empty() && f.status.empty() && f.reason.empty() && !f.minTimeSinceLastTransitionSeconds) {
      // cr's path ends in conditions[i], which upstream's message starts with.
      return Status::error(cr.path() +
                           ": at least one of type, status, reason, or minTimeSinceLastTransitionSeconds must be set");
    }
    out.push_back(std::move(f));
    return Status::ok();
  });
}

Status readOwnerKinds(policy::ArgsReader& r, Args& a) {
  return r.readObject("ownerKinds", [&](policy::ArgsReader& kr) -> Status {
    std::optional<std::vector<std::string>> include, exclude;
    KD_TRY(kr.readStringList("include", include));
    KD_TRY(kr.readStringList("exclude", exclude));
    KD_TRY(kr.finish());
    a.ownerKindsInclude = include.value_or(std::vector<std::string>{});
    a.ownerKindsExclude = exclude.value_or(std::vector<std::string>{});
    if (!a.ownerKindsInclude.empty() && !a.ownerKindsExclude.empty())
      return Status::error(kr.path() + ": only one of Include/Exclude ownerKinds can be set");
    return Status::ok();
  });
}

}  // namespace

const std::vector<std::string>& allowedStates() {
  static const std::vector<std::string> states = [] {
    std::vector<std::string> s{// Pod phases
                               "Running", "Pending", "Succeeded", "Failed", "Unknown",
                               // Pod status reasons
                               "NodeAffinity", "NodeLost", "Shutdown", "UnexpectedAdmissionError",
                               // Container waiting reasons
                               "PodInitializing", "ContainerCreating", "ImagePullBackOff", "CrashLoopBackOff",
                               "CreateContainerConfigError", "ErrImagePull", "CreateContainerError", "InvalidImageName",
                               // Container terminated reasons
                               "OOMKilled", "Error", "Completed", "DeadlineExceeded", "Evicted", "ContainerCannotRun",
                               "StartError"};
    std::sort(s.begin(), s.end());
    return s;
  }();
  return states;
}

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<std::vector<std::string>> states;
  std::optional<std::vector<std::int32_t>> exitCodes;
  std::optional<bool> init, ephemeral;
  KD_TRY(readPodListFilter(r, a.filter));
  KD_TRY(readOwnerKinds(r, a));
  KD_TRY(readSeconds(r, "maxPodLifeTimeSeconds", a.maxPodLifeTimeSeconds));
  KD_TRY(r.readStringList("states", states));
  KD_TRY(readConditions(r, a.conditions));
  KD_TRY(r.readInt32List("exitCodes", exitCodes));
  KD_TRY(r.readBool("includingInitContainers", init));
  KD_TRY(r.readBool("includingEphemeralContainers", ephemeral));
  KD_TRY(r.finish());
  a.states = states.value_or(std::vector<std::string>{});
  a.exitCodes = exitCodes.value_or(std::vector<std::int32_t>{});
  a.includingInitContainers = init.value_or(false);
  a.includingEphemeralContainers = ephemeral.value_or(false);
  const auto& allowed = allowedStates();
  for (std::size_t i = 0; i < a.states.size(); ++i) {
    if (!std::binary_search(allowed.begin(), allowed.end(), a.states[i]))
      return r.error("states[" + std::to_string(i) + "]",
                     "states must be one of " + joinedStates() + ", got \"" + a.states[i] + "\"");
  }
  if (!a.maxPodLifeTimeSeconds && a.states.empty() && a.conditions.empty() && a.exitCodes.empty()) {
    return Status::error(r.path() +
                         ": at least one filtering criterion must be specified (maxPodLifeTimeSeconds, states, "
                         "conditions, or exitCodes)");
  }
  return a;
}

}  // namespace kdesched::plugins::podlifetime
