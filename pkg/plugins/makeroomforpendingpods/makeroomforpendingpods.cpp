#include "pkg/plugins/makeroomforpendingpods/makeroomforpendingpods.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "pkg/base/log.h"
#include "pkg/plugins/common/registration.h"
#include "pkg/plugins/makeroomforpendingpods/pending.h"
#include "pkg/plugins/makeroomforpendingpods/room.h"

namespace kdesched::plugins::makeroomforpendingpods {
namespace {

// A moved pod's reason: which pending pod it makes room for, and where.
struct ForPending {
  const api::Pod* pending;
  const api::Node* node;
  const api::Node* landing;
  std::string text() const {
    return "to make room for pending pod " + pending->key() + " on node " + node->name + " (expected to land on " +
           landing->name + ")";
  }
};

std::string keys(const std::vector<const api::Pod*>& pods) {
  std::string out;
  for (const api::Pod* p : pods) out += (out.empty() ? "" : ",") + p->key();
  return out;
}

// Evicts the plan's pods; the pending pod's explain row says what came of it, and `tries` has it
// when any pod went. False when the plugin must stop (a total limit, a run-wide rate limit).
bool carryOut(const framework::Handle& h, const api::Pod& pending, const RoomPlan& plan, Tries& tries,
              api::Timestamp now) {
  std::size_t evicted = 0;
  std::string refused;
  bool stop = false;
  for (std::size_t i = 0; i < plan.moves.size(); ++i) {
    framework::EvictResult r = h.evict(*plan.moves[i], ForPending{&pending, plan.node, plan.landings[i]});
    if (r.evicted) {
      ++evicted;
      continue;
    }
    refused = plan.moves[i]->key() + " refused by " + r.by + ": " + r.detail;
    stop = r.stopsPlugin();
    break;
  }
  const std::string moved = keys(plan.moves);
  if (evicted > 0) tries.tried(pending, plan.node->name, now);
  if (refused.empty()) {
    h.helped(pending, "made room on node " + plan.node->name + " by evicting " + moved);
    log::info("made room for pending pod",
              {{"plugin", kName}, {"pod", pending.key()}, {"node", plan.node->name}, {"evicted", moved}});
  } else {
    const std::string why = "room on node " + plan.node->name + " needed " + moved + " to go, but " + refused + " (" +
                            std::to_string(evicted) + " evicted)";
    h.skip(pending, "not helped: " + why);
    log::warn("could not make room for pending pod",
              {{"plugin", kName}, {"pod", pending.key()}, {"node", plan.node->name}, {"reason", why}});
  }
  return !stop;
}

}  // namespace

std::optional<api::Timestamp> MakeRoomForPendingPods::eligibleAt(const api::Pod& pod, api::Timestamp now) const {
  if (!isUnboundPending(pod)) return std::nullopt;
  switch (judgePending(args_, pod, now)) {
    case NotPending::TooRecent: return unschedulableSince(pod).value_or(now) + args_.minPendingSeconds;
    case NotPending::None:
      if (const std::optional<api::Timestamp> until = tries_.heldUntil(pod); until && *until > now) return until;
      return std::nullopt;         // one to help now: the runs see it
    default: return std::nullopt;  // time alone will not make it one (a gate, a nomination, a filter)
  }
}

// Why a pending pod the cap left out was not searched (rotation.h).
std::string notSearchedText(std::size_t pending) {
  return "not searched this run: " + std::to_string(pending) + " pending pods to help, and a run searches at most " +
         std::to_string(kSearchesPerRun) +
         " (those searched least recently come first, then by priority and age); a later run searches it";
}

Status MakeRoomForPendingPods::deschedule(framework::Handle& h) {
  const api::Timestamp now = now_();
  const std::uint64_t run = rotation_.startRun();
  tries_.observe(h.snapshot(), now);
  std::vector<const api::Pod*> toSearch;
  for (const api::Pod* pending : pendingPodsToHelp(h, args_, now)) {
    if (std::optional<std::string> held = tries_.holds(*pending, now))
      h.skip(*pending, *held);
    else
      toSearch.push_back(pending);
  }
  const SearchRotation::Choice choice = rotation_.choose(toSearch, kSearchesPerRun, !h.scoped());
  if (!choice.left.empty()) {
    const std::string why = notSearchedText(toSearch.size());
    for (const api::Pod* left : choice.left) h.skip(*left, why);
    log::debug("pending pods not searched this run",
               {{"plugin", kName}, {"pending", toSearch.size()}, {"not_searched", choice.left.size()}});
  }
  RoomLedger ledger(h);
  RunCache cache(h);
  // Replicas of one scale-up get the same answer while nothing was moved in between: the first
  // one's "not helped" stands for the others, so many replicas cost one search.
  AlikeGroups<std::string> alike;
  for (const api::Pod* pending : choice.searched) {
    if (const std::string* same = alike.find(*pending)) {
      h.skip(*pending, *same);
      rotation_.fruitless(*pending, run);
      continue;
    }
    RoomSearchResult found = searchRoom(h, args_, *pending, ledger, cache, now);
    if (!found.found) {
      const std::string why = found.text(*pending, args_);
      h.skip(*pending, why);
      alike.add(*pending, why);
      rotation_.fruitless(*pending, run);
      log::debug("no room for pending pod", {{"plugin", kName}, {"pod", pending->key()}, {"reason", why}});
      continue;
    }
    alike.clear();  // the room changed: an answer found before may not hold
    if (!carryOut(h, *pending, found.plan, tries_, now)) break;
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  framework::PluginRegistration r = common::registrationOf<MakeRoomForPendingPods>(
      kName, decodeArgs, [](const Args&, const policy::RawArgs&, const framework::BuildContext& ctx) {
        return Result<Tries::Settings>(Tries::Settings{
            .backoff = {.initialSeconds = ctx.pendingRetryInitialSeconds, .maxSeconds = ctx.pendingRetryMaxSeconds},
            .sink = ctx.pendingOutcome});
      });
  r.kdeschedOnly = true;
  return r;
}

}  // namespace kdesched::plugins::makeroomforpendingpods
