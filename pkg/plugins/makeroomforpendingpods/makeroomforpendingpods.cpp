#include "pkg/plugins/makeroomforpendingpods/makeroomforpendingpods.h"

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

// Evicts the plan's pods; the pending pod's explain row says what came of it. False when the
// plugin must stop (a total limit, a run-wide rate limit).
bool carryOut(const framework::Handle& h, const api::Pod& pending, const RoomPlan& plan) {
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

Status MakeRoomForPendingPods::deschedule(framework::Handle& h) {
  // An event-triggered run names the pods it may act on; the pods this plugin moves are not those.
  if (h.scoped()) return Status::ok();
  const api::Timestamp now = now_();
  RoomLedger ledger(h);
  for (const api::Pod* pending : pendingPodsToHelp(h, args_, now)) {
    RoomSearchResult found = searchRoom(h, args_, *pending, ledger, now);
    if (!found.found) {
      const std::string why = found.text(*pending, args_);
      h.skip(*pending, why);
      log::debug("no room for pending pod", {{"plugin", kName}, {"pod", pending->key()}, {"reason", why}});
      continue;
    }
    if (!carryOut(h, *pending, found.plan)) break;
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  framework::PluginRegistration r = common::registrationOf<MakeRoomForPendingPods>(kName, decodeArgs);
  r.kdeschedOnly = true;
  return r;
}

}  // namespace kdesched::plugins::makeroomforpendingpods
