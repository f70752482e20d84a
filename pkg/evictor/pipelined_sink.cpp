#include "pkg/evictor/pipelined_sink.h"

namespace kdesched::evictor {

using framework::EvictResult;

PipelinedSink::PipelinedSink(Sink& primary, std::vector<Sink*> observers, std::size_t concurrency, Failed failed)
    : primary_(primary),
      observers_(std::move(observers)),
      concurrency_(concurrency == 0 ? 1 : concurrency),
      failed_(std::move(failed)) {
  if (concurrency_ > 1) {
    workers_.reserve(concurrency_);
    for (std::size_t i = 0; i < concurrency_; ++i) workers_.emplace_back([this] { work(); });
  }
}

PipelinedSink::~PipelinedSink() {
  flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void PipelinedSink::report(const Decision& d, const EvictResult& r, bool late) {
  for (Sink* s : observers_) {
    if (r.evicted)
      s->evict(d);
    else
      s->refused({d, r});
  }
  if (!late) return;  // the caller got this outcome from evict() itself
  if (r.evicted) {
    ++counts_.succeeded;
  } else {
    ++counts_.failed;
    if (failed_) failed_(d, r);
  }
}

EvictResult PipelinedSink::evict(const Decision& d) {
  if (workers_.empty()) {
    EvictResult r = primary_.evict(d);
    report(d, r, /*late=*/false);
    return r;
  }
  std::unique_lock<std::mutex> lock(mu_);
  // At most `concurrency` submissions without an answer: the optimistic window stays small.
  for (bool waited = false;; waited = true) {
    deliver(lock);
    if (queue_.size() + running_ < concurrency_) break;
    if (!waited) ++slotWaits_;
    cv_.wait(lock, [&] { return !done_.empty() || queue_.size() + running_ < concurrency_; });
  }
  queue_.push_back(d);
  lock.unlock();
  cv_.notify_all();
  return EvictResult::success();
}

void PipelinedSink::refused(const RefusedDecision& r) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    deliver(lock);
  }
  primary_.refused(r);
  for (Sink* s : observers_) s->refused(r);
}

FlushResult PipelinedSink::flush() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    deliver(lock);
    if (queue_.empty() && running_ == 0 && done_.empty()) break;
    cv_.wait(lock, [&] { return !done_.empty() || (queue_.empty() && running_ == 0); });
  }
  return std::exchange(counts_, {});
}

std::size_t PipelinedSink::slotWaits() {
  std::lock_guard<std::mutex> lock(mu_);
  return slotWaits_;
}

std::size_t PipelinedSink::undelivered() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_.size();
}

void PipelinedSink::deliver(std::unique_lock<std::mutex>& lock) {
  while (!done_.empty()) {
    Done item = std::move(done_.front());
    done_.pop_front();
    lock.unlock();
    report(item.d, item.result, /*late=*/true);
    lock.lock();
  }
}

void PipelinedSink::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Decision d = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    EvictResult r = primary_.evict(d);
    lock.lock();
    --running_;
    done_.push_back({std::move(d), std::move(r)});
    cv_.notify_all();
  }
}

}  // namespace kdesched::evictor
