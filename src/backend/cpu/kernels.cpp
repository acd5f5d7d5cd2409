// Choosing the kernel set: the reference plus every arch set the running CPU supports; the best
// one (or HART_ISA's choice) is used.
#include <atomic>
#include <cstdlib>
#include <deque>
#include <string>

#include "backend/cpu/kernels.h"
#include "common/error.h"

namespace hart::cpu {
namespace {

struct Registry {
  std::deque<Kernels> runnable;  // ref first, then the supported arch sets, best last
  std::string known = "ref";     // every name, runnable or not, for error messages
  std::vector<std::string> unsupported;
};

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    reg.runnable.push_back(ref_kernels());
    for (const ArchKernelSet& set : arch_kernel_sets()) {
      reg.known += ", " + set.name;
      if (!set.supported()) {
        reg.unsupported.push_back(set.name);
        continue;
      }
      reg.runnable.push_back(build_kernel_set(set));
    }
    return reg;
  }();
  return r;
}

const Kernels& find(std::string_view name) {
  const Registry& r = registry();
  for (const Kernels& k : r.runnable)
    if (k.name == name) return k;
  for (const std::string& n : r.unsupported)
    if (n == name) throw Error("HART_ISA=" + std::string(name) + ": kernel set not supported by this CPU");
  throw Error("HART_ISA=" + std::string(name) + ": unknown kernel set (known: " + r.known + ")");
}

std::atomic<const Kernels*> g_selected{nullptr};

}  // namespace

Kernels build_kernel_set(const ArchKernelSet& set) {
  Kernels k = ref_kernels();
  set.fill(k);
  for (uint32_t t = 0; t < kTypeCount; t++)  // see DotKernel::gemm
    if (k.dot[t].vec_dot != ref_kernels().dot[t].vec_dot && k.dot[t].gemm == ref_kernels().dot[t].gemm)
      k.dot[t].gemm = nullptr;
  k.name = set.name;
  return k;
}

const Kernels& kernels() {
  if (const Kernels* k = g_selected.load(std::memory_order_acquire)) return *k;
  const char* env = std::getenv("HART_ISA");
  const Kernels* chosen = env && *env ? &find(env) : &registry().runnable.back();
  const Kernels* expected = nullptr;
  // A concurrent select_kernels wins over the default.
  g_selected.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel);
  return *g_selected.load(std::memory_order_acquire);
}

std::vector<const Kernels*> available_kernels() {
  std::vector<const Kernels*> out;
  for (const Kernels& k : registry().runnable) out.push_back(&k);
  return out;
}

void select_kernels(std::string_view name) { g_selected.store(&find(name), std::memory_order_release); }

}  // namespace hart::cpu
