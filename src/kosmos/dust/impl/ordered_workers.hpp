// Host threads that run a stream's per-chunk jobs (e.g. copying rows into files) beside the thread
// that keeps the device fed, retiring the jobs in submission order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace kosmos {
namespace dust {
namespace Impl {

// Runs jobs on `threads` threads of their own (on the process' CPUs), at most `depth` of them
// queued or running: push() blocks while that many are, so when push() returns, every job pushed
// `depth` calls earlier is done (jobs retire in submission order even when they finish out of
// order). With several threads the jobs must be independent. No threads: push() runs the job on
// the calling thread. The first exception of a job is rethrown by push() or finish(); the jobs not
// yet started are dropped.
class OrderedWorkers {
 public:
  OrderedWorkers(std::size_t threads, std::size_t depth);
  ~OrderedWorkers();  // an exception elsewhere: drop what is queued
  OrderedWorkers(const OrderedWorkers&) = delete;
  OrderedWorkers& operator=(const OrderedWorkers&) = delete;

  void push(std::function<void()> job);
  // Waits for every job and ends the threads.
  void finish();

  double busy_seconds() const { return busy_seconds_; }        // in jobs, summed over the threads
  double blocked_seconds() const { return blocked_seconds_; }  // the caller waiting in push()
  std::size_t threads() const { return threads_.size(); }

 private:
  struct Job {
    std::size_t number;
    std::function<void()> run;
  };
  void loop();
  void stop(bool drop);

  std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable ready_, done_;
  std::deque<Job> jobs_;
  std::set<std::size_t> finished_;  // done, but after a job still running
  std::size_t pushed_ = 0, retired_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false, dropping_ = false;
  double busy_seconds_ = 0, blocked_seconds_ = 0;
  std::vector<std::thread> threads_;
};
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
