#include "pkg/plugins/removepodsviolatingtopologyspreadconstraint/args.h"

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
  if (!r.structural().isOk()) return r.structural();
  Args a;
  if (Status s = readPodListFilter(r, a.filter); !s.isOk()) return s;

  std::optional<std::vector<std::string>> constraints;
  if (Status s = r.readStringList("constraints", constraints); !s.isOk()) return s;
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
  if (Status s = r.readBool("topologyBalanceNodeFit", nodeFit); !s.isOk()) return s;
  a.topologyBalanceNodeFit = nodeFit.value_or(true);

  if (Status s = r.finish(); !s.isOk()) return s;
  return a;
}

}  // namespace kdesched::plugins::topologyspread
