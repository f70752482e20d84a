// kdesched only: MakeRoomForPendingPods, a deschedule plugin. A pod the scheduler cannot place
// because free capacity is fragmented (every node has 1.5 CPU free, the pod needs 2) waits
// forever: the scheduler preempts only lower-priority pods, and an autoscaler adds a node where
// moving one small pod would do. For each pending pod it helps (pending.h), highest priority
// first, it finds a node and the fewest running pods to move off it (room.h), and evicts them
// with the reason "to make room for pending pod ns/name on node X"; their controllers recreate
// them and the scheduler places them elsewhere, and the pending pod in the room they leave.
//
// It never preempts (a moved pod's priority is at most the pending pod's, and it must fit
// elsewhere) and never asks for a node. Opt-in, and refused under `compat: upstream`
// (engine.cpp): upstream has no such plugin. An event-triggered run (a scoped run) leaves it out
// for now: it acts in full cycles only.
#pragma once

#include <string>

#include "pkg/framework/registry.h"
#include "pkg/plugins/makeroomforpendingpods/args.h"

namespace kdesched::plugins::makeroomforpendingpods {

class MakeRoomForPendingPods : public framework::DeschedulePlugin {
 public:
  MakeRoomForPendingPods(Args args, framework::WallSeconds now) : args_(std::move(args)), now_(std::move(now)) {}
  std::string_view name() const override { return kName; }
  bool readsPodConditions() const override { return true; }
  bool judgesUnboundPods() const override { return true; }
  Status deschedule(framework::Handle& h) override;

 private:
  Args args_;
  framework::WallSeconds now_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::makeroomforpendingpods
