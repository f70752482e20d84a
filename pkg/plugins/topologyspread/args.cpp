#include "pkg/plugins/topologyspread/args.h"

#include <algorithm>

namespace kdesched::plugins::topologyspread {
namespace {

// Upstream prints its allowed set with Go's %v of a sets.Set, i.e. a map with sorted keys; the
// message is kept byte for byte so people can search for it.
constexpr const char* kAllowedConstraints = "map[DoNotSchedule:{} ScheduleAnyway:{}]";

}  // namespace

bool Args::balances(api::UnsatisfiableAction a) const {
  return std::find(constraints.begin(), constraints.end(), a) != constraints.end();
}

std::string_view toString(api::UnsatisfiableAction a) {
  return a == api::UnsatisfiableAction::DoNotSchedule ? "DoNotSchedule" : "ScheduleAnyway";
}

std::string_view toString(api::InclusionPolicy p) { return p == api::InclusionPolicy::Honor ? "Honor" : "Ignore"; }

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  KD_TRY(readPodListFilter(r, a.filter));

  std::optional<std::vector<std::string>> constraints;
  KD_TRY(r.readStringList("constraints", constraints));
  // Upstream's defaulting: an absent or empty list means [DoNotSchedule].
  if (constraints && !constraints->empty()) {
    a.constraints.clear();
    for (std::size_t i = 0; i < constraints->size(); ++i) {
      const std::string& c = (*constraints)[i];
      if (c == "DoNotSchedule") {
        a.constraints.push_back(api::UnsatisfiableAction::DoNotSchedule);
      } else if (c == "ScheduleAnyway") {
        a.constraints.push_back(api::UnsatisfiableAction::ScheduleAnyway);
      } else {
        return Status::error(r.pathOf("constraints") + "[" + std::to_string(i) + "]: constraint " + c +
                             " is not one of " + kAllowedConstraints);
      }
    }
  }

  std::optional<bool> nodeFit;
  KD_TRY(r.readBool("topologyBalanceNodeFit", nodeFit));
  a.topologyBalanceNodeFit = nodeFit.value_or(true);

  KD_TRY(r.finish());
  return a;
}

}  // namespace kdesched::plugins::topologyspread
