#include "backend/et/emu/harts.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>

#include "backend/et/emu/tensor_unit.h"
#include "backend/et/emu/tsan_fibers.h"
#include "common/error.h"

namespace hart::et::emu {

namespace {

enum class FiberState { Ready, AtGroupBarrier, AtLaunchBarrier, Done, Faulted };
enum class Report { Done, AtBarrier, Failed };
enum class Verdict { Release, Finish };

const char* scope_name(int scope) {
  switch (scope) {
    case ET_BARRIER_MINION: return "minion";
    case ET_BARRIER_SHIRE: return "shire";
    default: return "launch";
  }
}

}  // namespace

struct HartRunner::Fiber {
  et_env env{};
  ucontext_t ctx{};
  tsan::FiberContext tsan;  // what ThreadSanitizer knows it by (no-op in other builds)
  uint8_t* stack = nullptr;
  Worker* owner = nullptr;
  Launch* launch = nullptr;
  MinionTensorState* shire_tensor = nullptr;  // the engines of this hart's shire, by minion id
  size_t local_shire = 0;  // index into the owner's shires
  FiberState state = FiberState::Ready;
  int waiting_scope = 0;
};

struct HartRunner::Launch {
  std::string name;
  et_kernel_fn fn = nullptr;
  const void* params = nullptr;
  const Translate* translate = nullptr;
  std::vector<et_counters> counters;
  std::vector<std::vector<et_counters>> barrier_counters;
  std::vector<std::chrono::steady_clock::time_point> barrier_times;
  std::vector<std::vector<et_counters>> seams;  // per hart: its counters at each seam it passed

  std::mutex m;
  std::condition_variable cv;
  size_t participants = 0;
  size_t arrived = 0, at_barrier = 0, done = 0, failed = 0;
  uint64_t round = 0;
  Verdict verdict = Verdict::Finish;
  uint32_t error_hart = 0;
  std::optional<std::string> error;

  void set_error_locked(uint32_t hart, const std::string& message) {
    if (error && error_hart <= hart) return;  // keep the lowest hart's error: deterministic
    error = "kernel " + name + ": " + message;
    error_hart = hart;
  }

  void set_error(uint32_t hart, const std::string& message) {
    std::lock_guard lock(m);
    set_error_locked(hart, message);
  }

  // Every worker reports when it has nothing left to run; all at a launch barrier releases it.
  Verdict arrive(Report r) {
    std::unique_lock lock(m);
    (r == Report::Done ? done : r == Report::AtBarrier ? at_barrier : failed)++;
    const uint64_t my_round = round;
    if (++arrived == participants) {
      verdict = failed == 0 && at_barrier == participants ? Verdict::Release : Verdict::Finish;
      if (verdict == Verdict::Release) {  // every hart is parked: the counters are still
        barrier_counters.push_back(counters);
        barrier_times.push_back(std::chrono::steady_clock::now());
      }
      if (failed == 0 && done > 0 && at_barrier > 0) {
        set_error_locked(~0u, "deadlock: harts wait at a launch barrier that harts which already returned never reach");
      }
      arrived = at_barrier = done = failed = 0;
      round++;
      cv.notify_all();
      return verdict;
    }
    cv.wait(lock, [&] { return round != my_round; });
    return verdict;
  }
};

struct HartRunner::Worker {
  ucontext_t sched{};
  void* tsan_sched = nullptr;  // the host thread's own ThreadSanitizer context
  std::vector<Fiber*> fibers;
  std::deque<Fiber*> ready;
  std::vector<std::vector<Fiber*>> minion_groups;  // waiting harts, by local shire * 32 + minion
  std::vector<std::vector<Fiber*>> shire_groups;   // by local shire
  size_t finished = 0, at_launch = 0;
  bool faulted = false;

  void run(Launch& launch);
  Report report(Launch& launch);
};

namespace {

thread_local HartRunner::Fiber* t_current = nullptr;

void yield(HartRunner::Fiber* f);

// The message is recorded before the fiber stops for good: nothing on an abandoned fiber's stack
// is ever destroyed, so no heap-owning object may live there across the switch.
void record_fault(HartRunner::Fiber* f, const std::string& message) { f->launch->set_error(f->env.hart_id, message); }

[[noreturn]] void stop_faulted(HartRunner::Fiber* f) {
  f->state = FiberState::Faulted;
  f->owner->faulted = true;
  yield(f);
  std::abort();  // a faulted fiber is never resumed
}

}  // namespace

// Fiber-side callbacks (plain functions: kernels call them through et_env).
struct FiberCalls {
  static void* translate(const et_env* env, uint64_t addr, uint64_t bytes) {
    auto* f = static_cast<HartRunner::Fiber*>(env->runtime);
    if (uint8_t* p = (*f->launch->translate)(addr, bytes)) return p;
    char msg[160];
    std::snprintf(msg, sizeof msg, "hart %u accessed %llu bytes at 0x%llx, outside device allocations", env->hart_id,
                  static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(addr));
    record_fault(f, msg);
    stop_faulted(f);
  }

  static void fail(const et_env* env, const char* message) {
    auto* f = static_cast<HartRunner::Fiber*>(env->runtime);
    record_fault(f, "hart " + std::to_string(env->hart_id) + " failed: " + message);
    stop_faulted(f);
  }

  static void barrier(const et_env* env, int scope) {
    auto* f = static_cast<HartRunner::Fiber*>(env->runtime);
    HartRunner::Worker* w = f->owner;
    if (scope == ET_SEAM) {  // this hart's own list: no other hart writes it
      f->launch->seams[env->thread_id].push_back(*env->counters);
      return;
    }
    if (scope == ET_BARRIER_LAUNCH) {
      f->state = FiberState::AtLaunchBarrier;
      w->at_launch++;
      yield(f);
      return;
    }
    if (scope != ET_BARRIER_MINION && scope != ET_BARRIER_SHIRE) {
      record_fault(f, "unknown barrier scope");
      stop_faulted(f);
    }
    auto& group = scope == ET_BARRIER_MINION ? w->minion_groups[f->local_shire * ET_MINIONS_PER_SHIRE + env->minion_id]
                                             : w->shire_groups[f->local_shire];
    const size_t need = scope == ET_BARRIER_MINION ? ET_HARTS_PER_MINION : ET_HARTS_PER_SHIRE;
    if (group.size() + 1 == need) {  // last to arrive: release the others and carry on
      for (HartRunner::Fiber* o : group) {
        o->state = FiberState::Ready;
        w->ready.push_back(o);
      }
      group.clear();
      return;
    }
    group.push_back(f);
    f->state = FiberState::AtGroupBarrier;
    f->waiting_scope = scope;
    yield(f);
  }

  // A TensorReduce half waits for its partner by letting the worker's other harts run; with none
  // left to run (or after too many rounds: partners waiting for each other) it is a deadlock.
  template <class Ready>
  static void wait_for_partner(HartRunner::Fiber* f, Ready ready, const char* what, int partner) {
    for (uint32_t round = 0; !ready(); round++) {
      if (f->owner->ready.empty() || round == (1u << 22)) {
        record_fault(f, "deadlock: hart " + std::to_string(f->env.hart_id) + " waits for minion " +
                            std::to_string(partner) + " of its shire to " + what);
        stop_faulted(f);
      }
      f->owner->ready.push_back(f);
      yield(f);
    }
  }

  static void tensor(const et_env* env, const et_tensor_insn* insn) {
    auto* f = static_cast<HartRunner::Fiber*>(env->runtime);
    const std::optional<std::string> err = check_tensor_insn(*insn, env->hart_in_minion, env->minion_id);
    if (err) {
      record_fault(f, "hart " + std::to_string(env->hart_id) + ": " + *err);
      stop_faulted(f);
    }
    MinionTensorState& self = f->shire_tensor[env->minion_id];
    if (insn->op == ET_TENSOR_SEND) {
      MinionTensorState& to = f->shire_tensor[insn->partner];
      const int me = int(env->minion_id);
      wait_for_partner(f, [&] { return to.expecting == me && to.inbox_rows == 0; }, "receive", insn->partner);
      send_tensor_rows(self, int(env->minion_id), to, insn->rows, *env->counters);
      return;
    }
    if (insn->op == ET_TENSOR_RECV) {
      self.expecting = insn->partner;
      wait_for_partner(f, [&] { return self.inbox_rows != 0 && self.inbox_from == insn->partner; }, "send",
                       insn->partner);
      if (self.inbox_rows != insn->rows) {
        record_fault(f, "hart " + std::to_string(env->hart_id) + ": TensorReduce receives " +
                            std::to_string(insn->rows) + " rows, its partner sent " + std::to_string(self.inbox_rows));
        stop_faulted(f);
      }
    }
    execute_tensor_insn(self, *insn, *env->counters);
  }

  // The minion's FPU flushes subnormal operands and results to zero (sw-sysemu builds its
  // softfloat with SOFTFLOAT_DENORMALS_TO_ZERO); on x86-64 the kernels run that way too (MXCSR
  // DAZ + FTZ, per fiber: swapcontext saves and restores it). Other hosts keep IEEE subnormals.
  static void chip_float_mode() {
#if defined(__x86_64__)
    _mm_setcsr(_mm_getcsr() | 0x8040);
#endif
  }

  static void main() {
    chip_float_mode();
    HartRunner::Fiber* f = t_current;
    f->launch->fn(f->launch->params, &f->env);
    f->state = FiberState::Done;
    yield(f);
  }
};

namespace {

void yield(HartRunner::Fiber* f) {
  tsan::switch_to(f->owner->tsan_sched);
  swapcontext(&f->ctx, &f->owner->sched);
}

// getcontext "returns twice" as far as the compiler knows; keeping it in its own frame keeps the
// caller's locals out of that analysis. It runs once per fiber, before any makecontext.
[[gnu::noinline]] bool init_context(ucontext_t* ctx) { return getcontext(ctx) == 0; }

}  // namespace

void HartRunner::Worker::run(Launch& launch) {
  tsan_sched = tsan::current();
  for (;;) {
    while (!faulted && !ready.empty()) {
      Fiber* f = ready.front();
      ready.pop_front();
      t_current = f;
      tsan::switch_to(f->tsan.get());
      swapcontext(&sched, &f->ctx);
      if (f->state == FiberState::Done) finished++;
    }
    if (launch.arrive(report(launch)) == Verdict::Finish) return;
    for (Fiber* f : fibers) {
      if (f->state != FiberState::AtLaunchBarrier) continue;
      f->state = FiberState::Ready;
      ready.push_back(f);
    }
    at_launch = 0;
  }
}

Report HartRunner::Worker::report(Launch& launch) {
  if (faulted) return Report::Failed;
  if (finished == fibers.size()) return Report::Done;
  if (at_launch == fibers.size()) return Report::AtBarrier;
  for (Fiber* f : fibers) {
    const bool waits = f->state == FiberState::AtGroupBarrier || f->state == FiberState::AtLaunchBarrier;
    if (!waits) continue;
    const int scope = f->state == FiberState::AtLaunchBarrier ? ET_BARRIER_LAUNCH : f->waiting_scope;
    launch.set_error(f->env.hart_id, "deadlock: hart " + std::to_string(f->env.hart_id) + " waits at a " +
                                         scope_name(scope) + " barrier that other harts never reach");
    break;
  }
  return Report::Failed;
}

HartRunner::HartRunner(uint32_t shires, unsigned host_threads, size_t stack_bytes) : shires_(shires) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  stack_bytes_ = (stack_bytes + page - 1) / page * page;
  const size_t harts = size_t(shires) * ET_HARTS_PER_SHIRE;
  tensor_.resize(size_t(shires) * ET_MINIONS_PER_SHIRE);
  scratch_bytes_ = size_t(shires) * ET_SHIRE_SCRATCH_BYTES;  // touched only where kernels use it
  void* scratch = mmap(nullptr, scratch_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (scratch == MAP_FAILED) throw Error(std::string("cannot reserve shire scratchpads: ") + std::strerror(errno));
  scratch_ = static_cast<uint8_t*>(scratch);
  const size_t slot = stack_bytes_ + page;  // a guard page below each stack
  stacks_bytes_ = slot * harts;
  void* p = mmap(nullptr, stacks_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw Error(std::string("cannot reserve hart stacks: ") + std::strerror(errno));
  stacks_ = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < harts; i++) {
    auto f = std::make_unique<Fiber>();
    f->stack = stacks_ + i * slot + page;
    if (mprotect(f->stack, stack_bytes_, PROT_READ | PROT_WRITE) != 0 || !init_context(&f->ctx)) {
      throw Error(std::string("cannot set up hart stacks: ") + std::strerror(errno));
    }
    fibers_.push_back(std::move(f));
  }
  if (host_threads == 0) host_threads = std::max(1u, std::thread::hardware_concurrency());
  host_threads = std::min<unsigned>(host_threads, shires);
  for (unsigned i = 0; i < host_threads; i++) workers_.push_back(std::make_unique<Worker>());
  for (unsigned i = 1; i < host_threads; i++) threads_.emplace_back([this, i] { worker_loop(i); });
}

HartRunner::~HartRunner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  munmap(stacks_, stacks_bytes_);
  munmap(scratch_, scratch_bytes_);
}

void HartRunner::worker_loop(size_t index) {
  uint64_t seen = 0;
  for (;;) {
    Launch* launch;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (index >= participants_) continue;
      launch = launch_;
    }
    workers_[index]->run(*launch);
    std::lock_guard lock(mutex_);
    if (--running_ == 0) cv_.notify_all();
  }
}

LaunchOutcome HartRunner::run(const std::string& name, et_kernel_fn fn, const void* params, uint64_t shire_mask,
                              const Translate& translate) {
  std::vector<uint32_t> active;
  for (uint32_t s = 0; s < shires_; s++) {
    if (shire_mask >> s & 1) active.push_back(s);
  }
  Launch launch;
  launch.name = name;
  launch.fn = fn;
  launch.params = params;
  launch.translate = &translate;
  const uint32_t num_threads = uint32_t(active.size()) * ET_HARTS_PER_SHIRE;
  launch.counters.assign(num_threads, et_counters{});
  launch.seams.assign(num_threads, {});
  launch.participants = std::min(workers_.size(), active.size());
  if (launch.participants == 0) {
    LaunchOutcome none;
    none.counters = std::move(launch.counters);
    return none;
  }

  // Shires in contiguous blocks per worker; harts keep their rank order within the launch.
  for (size_t w = 0; w < launch.participants; w++) {
    Worker& worker = *workers_[w];
    const size_t first = w * active.size() / launch.participants, last = (w + 1) * active.size() / launch.participants;
    worker.fibers.clear();
    worker.ready.clear();
    worker.minion_groups.assign((last - first) * ET_MINIONS_PER_SHIRE, {});
    worker.shire_groups.assign(last - first, {});
    worker.finished = worker.at_launch = 0;
    worker.faulted = false;
    for (size_t rank = first; rank < last; rank++) {
      for (uint32_t h = 0; h < ET_HARTS_PER_SHIRE; h++) {
        Fiber* f = fibers_[size_t(active[rank]) * ET_HARTS_PER_SHIRE + h].get();
        const uint32_t thread_id = uint32_t(rank) * ET_HARTS_PER_SHIRE + h;
        f->env = et_env{};
        f->env.hart_id = active[rank] * ET_HARTS_PER_SHIRE + h;
        f->env.shire_id = active[rank];
        f->env.minion_id = h / ET_HARTS_PER_MINION;
        f->env.hart_in_minion = h % ET_HARTS_PER_MINION;
        f->env.thread_id = thread_id;
        f->env.num_threads = num_threads;
        f->env.shire_mask = shire_mask;
        f->env.counters = &launch.counters[thread_id];
        f->env.translate = &FiberCalls::translate;
        f->env.barrier = &FiberCalls::barrier;
        f->env.fail = &FiberCalls::fail;
        f->env.tensor = &FiberCalls::tensor;
        f->env.shire_scratch = scratch_ + size_t(active[rank]) * ET_SHIRE_SCRATCH_BYTES;
        f->shire_tensor = &tensor_[size_t(active[rank]) * ET_MINIONS_PER_SHIRE];
        if (h % ET_HARTS_PER_MINION == 0) {  // a launch starts with no reduction under way
          MinionTensorState& m = f->shire_tensor[h / ET_HARTS_PER_MINION];
          m.expecting = m.inbox_from = -1;
          m.inbox_rows = 0;
        }
        f->env.runtime = f;
        f->owner = &worker;
        f->launch = &launch;
        f->local_shire = rank - first;
        f->state = FiberState::Ready;
        f->ctx.uc_stack.ss_sp = f->stack;
        f->ctx.uc_stack.ss_size = stack_bytes_;
        f->ctx.uc_link = nullptr;
        makecontext(&f->ctx, &FiberCalls::main, 0);
        f->tsan.start_launch();
        worker.fibers.push_back(f);
        worker.ready.push_back(f);
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    launch_ = &launch;
    participants_ = launch.participants;
    running_ = launch.participants - 1;
    generation_++;
  }
  cv_.notify_all();
  workers_[0]->run(launch);
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return running_ == 0; });
    launch_ = nullptr;
  }
  LaunchOutcome out;
  out.counters = std::move(launch.counters);
  out.barrier_counters = std::move(launch.barrier_counters);
  out.barrier_times = std::move(launch.barrier_times);
  out.seams = std::move(launch.seams);
  out.error = std::move(launch.error);
  return out;
}

}  // namespace hart::et::emu
