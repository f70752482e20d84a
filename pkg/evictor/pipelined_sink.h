// Overlapping eviction requests. An Eviction POST takes ~100 ms on a busy API server (it writes the
// PDB status and the pod); one at a time, a cycle that evicts 300 pods spends 30 s waiting. This
// sink keeps up to `concurrency` requests in flight on worker threads, under the client's QPS
// limit like every other request.
//
// The decision side stays single-threaded and deterministic: evict() answers at once, optimistically
// ("submitted" counts as evicted for the limits, the PDB budget and the plugins' bookkeeping), and
// the real outcomes reach the observers on the caller's thread, as they finish, from the next
// evict()/refused()/flush(). Optimism can only evict less, never more: a submission that fails
// still used its slot under maxNoOfPodsToEvict*, its PDB disruption and, for LowNodeUtilization,
// the room it would have freed. With concurrency 1 nothing is pipelined: evict() returns the
// primary's own answer, as upstream does.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "pkg/evictor/sink.h"

namespace kdesched::evictor {

// Outcomes that arrived after evict() had answered "evicted" (pipelined submissions only: with
// concurrency 1 evict() returns the real outcome and nothing is counted here).
struct FlushResult {
  std::size_t succeeded = 0;  // late answers since the last flush: the server accepted
  std::size_t failed = 0;     // ... it refused (or the request never reached it)
};

class PipelinedSink : public Sink {
 public:
  // Called on the caller's thread for each pipelined submission that failed after evict() had
  // answered "evicted", after the observers (e.g. to forget the pod in a "recently evicted" memory).
  using Failed = std::function<void(const Decision&, const framework::EvictResult&)>;

  PipelinedSink(Sink& primary, std::vector<Sink*> observers, std::size_t concurrency, Failed failed = nullptr);
  ~PipelinedSink() override;
  PipelinedSink(const PipelinedSink&) = delete;
  PipelinedSink& operator=(const PipelinedSink&) = delete;

  framework::EvictResult evict(const Decision& d) override;
  void refused(const RefusedDecision& r) override;
  // Waits until every submitted eviction has its answer and delivers the answers. The Decisions'
  // pods must stay alive until then (the cycle's snapshot).
  FlushResult flush();

  // How often evict() had to wait for a free slot: the window was full, so the concurrency, not
  // the decisions, set the pace.
  std::size_t slotWaits();
  // Answers that arrived and wait to be delivered on the caller's thread.
  std::size_t undelivered();

 private:
  struct Done {
    Decision d;
    framework::EvictResult result;
  };
  void work();
  // Delivers finished outcomes (caller's thread); `lock` is released while observers run.
  void deliver(std::unique_lock<std::mutex>& lock);
  void report(const Decision& d, const framework::EvictResult& r, bool late);

  Sink& primary_;
  std::vector<Sink*> observers_;
  std::size_t concurrency_;
  Failed failed_;
  FlushResult counts_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Decision> queue_;  // submitted, not yet picked by a worker
  std::size_t running_ = 0;     // picked by a worker, no answer yet
  std::deque<Done> done_;       // answered, not yet delivered
  bool stopping_ = false;
  std::size_t slotWaits_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace kdesched::evictor
