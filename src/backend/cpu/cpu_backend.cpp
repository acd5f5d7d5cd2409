#include "backend/cpu/cpu_backend.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "backend/cpu/ops/ops.h"
#include "backend/cpu/schedule.h"
#include "common/error.h"

namespace hart::cpu {

// Grows to the largest node's need and is kept across graphs.
struct CpuBackend::WorkBuffer {
  std::byte* data = nullptr;
  size_t size = 0;

  ~WorkBuffer() { std::free(data); }
  void reserve(size_t n) {
    if (n <= size) return;
    std::free(data);
    data = static_cast<std::byte*>(std::aligned_alloc(kCacheLine, align_up(n)));
    if (!data) throw std::bad_alloc();
    size = n;
  }
};

CpuBackend::CpuBackend(int n_threads, uint64_t cpu_mask)
    : pool_(n_threads, cpus_of_mask(cpu_mask)), work_(std::make_unique<WorkBuffer>()) {}
CpuBackend::~CpuBackend() = default;

bool CpuBackend::supports_op(const Tensor& node) const {
  if (node.op == Op::NONE) return true;
  const OpImpl& impl = op_impl(node.op);
  return !impl.supports || impl.supports(node, kernels());
}

namespace {

void check_memory(const Tensor& t, const Tensor& node) {
  if (!t.data)
    throw Error(std::string("CPU backend: ") + op_name(node.op) + " node '" + node.name + "' reads or writes a " +
                "tensor without memory ('" + t.name + "'); run plan_memory first");
}

// Graphs whose schedules are kept: a session alternates between its decode step and at most a
// prefill chunk or two; the server's engine between a few batch shapes.
constexpr size_t kKeptGraphs = 4;

struct alignas(kCacheLine) Counters {
  std::atomic<int> claimed{0};    // pieces handed out
  std::atomic<int64_t> chunk{0};  // the kernel's own counter (OpContext::chunk)
};

}  // namespace

struct CpuBackend::Compiled {
  uint64_t graph_id;
  Schedule sched;
  std::unique_ptr<Counters[]> counters;  // one per step, zeroed before each compute
  // A graph of one-piece steps only (a tiny model, a short decode step) gains nothing from other
  // threads but their hand-offs: each step would wait for the thread that computed the one before.
  bool serial;
};

CpuBackend::Compiled& CpuBackend::compiled(const Graph& g) {
  for (size_t i = 0; i < compiled_.size(); i++) {
    if (compiled_[i]->graph_id != g.id || g.id == 0) continue;
    std::rotate(compiled_.begin() + ptrdiff_t(i), compiled_.begin() + ptrdiff_t(i) + 1, compiled_.end());
    return *compiled_.back();
  }
  const Kernels& k = kernels();
  std::vector<const Tensor*> nodes;  // the ones with a kernel; views need no work
  for (const Tensor* node : g.nodes) {
    if (!supports_op(*node))
      throw Error(std::string("CPU backend (") + k.name + " kernels): " + op_name(node->op) + " on " +
                  std::string(type_name(node->src[0] ? node->src[0]->type : node->type)) + " ('" + node->name +
                  "') is not supported");
    if (!op_impl(node->op).compute) continue;
    check_memory(*node, *node);
    for (const Tensor* s : node->src)
      if (s) check_memory(*s, *node);
    nodes.push_back(node);
  }
  packs_.prepare(g, k, pool_);
  auto c = std::make_unique<Compiled>();
  c->graph_id = g.id;
  c->sched = make_schedule(nodes, k, pool_.size());
  c->counters = std::make_unique<Counters[]>(c->sched.steps.size());
  c->serial = std::all_of(c->sched.steps.begin(), c->sched.steps.end(),
                          [](const Step& st) { return st.pieces == 1 && !st.team; });
  work_->reserve(c->sched.work_size);
  // The least recently computed graph makes room (a graph without an id is never found again).
  if (compiled_.size() == kKeptGraphs) compiled_.erase(compiled_.begin());
  compiled_.push_back(std::move(c));
  return *compiled_.back();
}

void CpuBackend::compute(const Graph& g) {
  const Kernels& k = kernels();
  Compiled& c = compiled(g);
  const Schedule& sched = c.sched;
  for (size_t i = 0; i < sched.steps.size(); i++) {
    c.counters[i].claimed.store(0, std::memory_order_relaxed);
    c.counters[i].chunk.store(0, std::memory_order_relaxed);
  }
  Counters* counters = c.counters.get();
  const uint32_t base = finished_.load();  // no thread is inside a run: the count is settled
  const NodeThreads team(pool_, true), pieces(pool_, false);
  ErrorSink errors;
  auto body = [&](int ith, int) {
    for (size_t i = 0; i < sched.steps.size(); i++) {
      const Step& st = sched.steps[i];
      if (st.wait_before) finished_.wait_reach(base + st.pieces_before, ThreadPool::kSpinUs);
      const OpImpl& impl = op_impl(st.node->op);
      auto piece = [&](int p) {
        const OpContext ctx{p, st.pieces, k, work_->data + st.work_offset, st.team ? team : pieces,
                            counters[i].chunk, errors, &packs_};
        impl.compute(*st.node, ctx);
        finished_.add(1);
      };
      if (st.team) {
        piece(ith);
        continue;
      }
      for (int p = counters[i].claimed.fetch_add(1, std::memory_order_relaxed); p < st.pieces;
           p = counters[i].claimed.fetch_add(1, std::memory_order_relaxed))
        piece(p);
    }
  };
  if (c.serial)
    body(0, 1);
  else
    pool_.run(body);
  if (!errors.first().empty()) throw Error("CPU backend: " + errors.first());
}

}  // namespace hart::cpu
