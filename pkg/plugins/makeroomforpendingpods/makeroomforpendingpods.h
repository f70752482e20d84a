// kdesched only: MakeRoomForPendingPods, a deschedule plugin. A pod the scheduler cannot place
// because free capacity is fragmented (every node has 1.5 CPU free, the pod needs 2) waits
// forever: the scheduler preempts only lower-priority pods, and an autoscaler adds a node where
// moving one small pod would do. For each pending pod it helps (pending.h), highest priority
// first, it finds a node and the fewest running pods to move off it (room.h), and evicts them
// with the reason "to make room for pending pod ns/name on node X"; their controllers recreate
// them and the scheduler places them elsewhere, and the pending pod in the room they leave.
//
// It never preempts (a moved pod's priority is at most the pending pod's, and it must fit
// elsewhere) and never asks for a node. A pod it made room for is not tried again while the
// anti-flapping backoff holds, and each try's outcome is reported once (tries.h). Opt-in, and
// refused under `compat: upstream` (engine.cpp): upstream has no such plugin. A run searches at
// most kSearchesPerRun pending pods, in rotation (rotation.h), so its cost stays linear in nodes
// and pods however many pods are pending.
#pragma once

#include <string>

#include "pkg/framework/registry.h"
#include "pkg/plugins/makeroomforpendingpods/args.h"
#include "pkg/plugins/makeroomforpendingpods/rotation.h"
#include "pkg/plugins/makeroomforpendingpods/tries.h"

namespace kdesched::plugins::makeroomforpendingpods {

class MakeRoomForPendingPods : public framework::DeschedulePlugin, public framework::DeadlinePlugin {
 public:
  MakeRoomForPendingPods(Args args, Tries::Settings tries, framework::WallSeconds now)
      : args_(std::move(args)), tries_(tries.backoff, std::move(tries.sink)), now_(std::move(now)) {}
  std::string_view name() const override { return kName; }
  bool readsPodConditions() const override { return true; }
  bool judgesUnboundPods() const override { return true; }
  Status deschedule(framework::Handle& h) override;
  // When a pending pod becomes one to help: minPendingSeconds after the scheduler gave up on it,
  // or when the backoff after a try runs out. The daemon's deadline queue runs the plugin for it
  // then (a scoped run: it helps the scope's pending pods only, and may move any pod for them).
  std::optional<api::Timestamp> eligibleAt(const api::Pod& pod, api::Timestamp now) const override;

 private:
  Args args_;
  Tries tries_;              // the pods this instance made room for (kept across the daemon's runs)
  SearchRotation rotation_;  // which pending pods a run searches, at most kSearchesPerRun
  framework::WallSeconds now_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::makeroomforpendingpods
