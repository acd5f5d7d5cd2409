#include "backend/cpu/sets_under_test.h"

#include <deque>

namespace hart::cpu {

std::vector<const Kernels*> sets_under_test() {
  static const std::deque<Kernels> twins = [] {
    std::deque<Kernels> out;
    for (const ArchKernelSet& set : arch_test_twins())
      if (set.supported()) out.push_back(build_kernel_set(set));
    return out;
  }();
  std::vector<const Kernels*> sets = available_kernels();
  for (const Kernels& k : twins) sets.push_back(&k);
  return sets;
}

}  // namespace hart::cpu
