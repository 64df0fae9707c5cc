// Helper threads (file writers, pinned allocations) must not inherit the one core that an OpenMP
// binding gave the thread starting them.
#include <kosmos/core/threads.hpp>

#include <gtest/gtest.h>

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
#endif

namespace {

#if defined(__linux__)
TEST(HelperThreads, RunOnTheProcessCpusWhenTheStartingThreadIsBound) {
  cpu_set_t original;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(original), &original), 0);
  if (::sysconf(_SC_NPROCESSORS_ONLN) < 2 || CPU_COUNT(&original) < 1)
    GTEST_SKIP() << "one CPU: nothing to tell apart";
  int first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);  // as OMP_PROC_BIND binds it
  cpu_set_t inherited, helper;
  std::thread plain([&] { ::sched_getaffinity(0, sizeof(inherited), &inherited); });
  plain.join();
  std::thread started = kosmos::Impl::start_helper_thread(
      [&] { ::sched_getaffinity(0, sizeof(helper), &helper); });
  started.join();
  ::sched_setaffinity(0, sizeof(original), &original);
  EXPECT_EQ(CPU_COUNT(&inherited), 1);  // what a plain std::thread gets
  EXPECT_GE(CPU_COUNT(&helper), 2);
  EXPECT_TRUE(CPU_ISSET(first, &helper));
}
#endif
}  // namespace
