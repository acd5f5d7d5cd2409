// ThreadSanitizer's view of the hart fibers. TSan follows threads, not swapcontext: untold, it
// takes a host thread's fibers for the thread itself, piles their never-unwound frames on the
// thread's shadow stack and crashes a few dozen full-device launches later (SEGV in et_model_test).
// Under -fsanitize=thread each fiber gets a TSan context of its own and every switch is announced
// just before it happens; the switch orders what each side did before it (fibers of one host
// thread do run one after the other), so TSan checks the harts of different host threads against
// each other, not harts of one thread. In any other build these are no-ops.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define HART_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HART_TSAN_FIBERS 1
#endif
#endif

#ifdef HART_TSAN_FIBERS
#include <sanitizer/tsan_interface.h>
#endif

namespace hart::et::emu::tsan {

#ifdef HART_TSAN_FIBERS
// The running thread's (or fiber's) own context: what a fiber switches back to.
inline void* current() { return __tsan_get_current_fiber(); }
inline void switch_to(void* context) { __tsan_switch_to_fiber(context, 0); }

// One fiber's context. A fiber ends each launch by switching away, never by returning, so TSan
// never sees its last frames unwind: every launch leaves a few entries (a faulted kernel's
// frames at most) on the context's shadow stack, which has a fixed size (64K entries) and no
// overflow check. So a context serves a bounded number of launches, then a fresh one takes
// over. (A fresh context for every launch maps and unmaps one per hart per launch: ~3x the CPU.)
class FiberContext {
 public:
  FiberContext() = default;
  FiberContext(const FiberContext&) = delete;
  FiberContext& operator=(const FiberContext&) = delete;
  ~FiberContext() { release(); }

  // Before each launch of the fiber.
  void start_launch() {
    if (launches_++ % kLaunchesPerContext == 0) {
      release();
      context_ = __tsan_create_fiber(0);
    }
  }
  void* get() const { return context_; }

 private:
  static constexpr unsigned kLaunchesPerContext = 256;
  void release() {
    if (context_) __tsan_destroy_fiber(context_);
  }
  void* context_ = nullptr;
  unsigned launches_ = 0;
};
#else
inline void* current() { return nullptr; }
inline void switch_to(void*) {}

class FiberContext {
 public:
  void start_launch() {}
  void* get() const { return nullptr; }
};
#endif

}  // namespace hart::et::emu::tsan
