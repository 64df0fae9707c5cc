#include <kosmos/core/threads.hpp>
#include <kosmos/dust/impl/ordered_workers.hpp>

#include <algorithm>
#include <chrono>

namespace kosmos {
namespace dust {
namespace Impl {

OrderedWorkers::OrderedWorkers(std::size_t threads, std::size_t depth)
    : depth_(std::max(depth, threads)) {
  for (std::size_t t = 0; t < threads; ++t)
    threads_.push_back(kosmos::Impl::start_helper_thread([this] { loop(); }));
}

OrderedWorkers::~OrderedWorkers() {
  stop(true);
}

void OrderedWorkers::push(std::function<void()> job) {
  const auto t0 = std::chrono::steady_clock::now();
  if (threads_.empty()) {
    job();
    busy_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pushed_ - retired_ < depth_ || error_; });
  blocked_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (error_) std::rethrow_exception(error_);
  jobs_.push_back({pushed_++, std::move(job)});
  ready_.notify_one();
}

void OrderedWorkers::finish() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return retired_ == pushed_ || error_; });
  }
  stop(false);
  if (error_) std::rethrow_exception(error_);
}

void OrderedWorkers::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    ready_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
    if (jobs_.empty() || dropping_) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    const auto t0 = std::chrono::steady_clock::now();
    std::exception_ptr error;
    try {
      job.run();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    finished_.insert(job.number);
    while (!finished_.empty() && *finished_.begin() == retired_) {
      finished_.erase(finished_.begin());
      ++retired_;
    }
    if (error && !error_) error_ = error;
    if (error_) jobs_.clear();
    done_.notify_all();
  }
}

void OrderedWorkers::stop(bool drop) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    dropping_ = drop;
  }
  ready_.notify_all();
  for (auto& thread : threads_)
    if (thread.joinable()) thread.join();
}
}  // namespace Impl
}  // namespace dust
}  // namespace kosmos
