#include "backend/cpu/cpu_backend.h"

#include <cstdlib>
#include <new>

#include "backend/cpu/ops/ops.h"
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

CpuBackend::CpuBackend(int n_threads) : pool_(n_threads), work_(std::make_unique<WorkBuffer>()) {}
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

}  // namespace

void CpuBackend::compute(const Graph& g) {
  const Kernels& k = kernels();
  const int nth = pool_.size();
  size_t work = 0;
  std::vector<const Tensor*> nodes;  // the ones with a kernel; views need no work
  for (const Tensor* node : g.nodes) {
    if (!supports_op(*node))
      throw Error(std::string("CPU backend (") + k.name + " kernels): " + op_name(node->op) + " on " +
                  std::string(type_name(node->src[0] ? node->src[0]->type : node->type)) + " ('" + node->name +
                  "') is not supported");
    const OpImpl& impl = op_impl(node->op);
    if (!impl.compute) continue;
    check_memory(*node, *node);
    for (const Tensor* s : node->src)
      if (s) check_memory(*s, *node);
    if (impl.work_size) work = std::max(work, impl.work_size(*node, k, nth));
    nodes.push_back(node);
  }
  work_->reserve(work);

  std::atomic<int64_t> chunk{0};
  ErrorSink errors;
  pool_.run([&](int ith, int n) {
    const OpContext ctx{ith, n, k, work_->data, pool_, chunk, errors};
    for (size_t i = 0; i < nodes.size(); i++) {
      op_impl(nodes[i]->op).compute(*nodes[i], ctx);
      if (i + 1 < nodes.size()) pool_.barrier();
    }
  });
  if (!errors.first().empty()) throw Error("CPU backend: " + errors.first());
}

}  // namespace hart::cpu
