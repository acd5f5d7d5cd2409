// Arches whose kernel sets need no test twin (sets_under_test.h).
#include "backend/cpu/sets_under_test.h"

namespace hart::cpu {

std::vector<ArchKernelSet> arch_test_twins() { return {}; }

}  // namespace hart::cpu
