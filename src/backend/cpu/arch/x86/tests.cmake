# Focused tests of the x86 kernel sets. Included by src/backend/cpu/CMakeLists.txt, whose glob
# compiles arch/x86/*.cpp (minus *_test.cpp) into hart_cpu: no per-file flags are needed, each
# set_*.cpp selects its ISA with target pragmas (target.h).
hart_test(x86_test ${CMAKE_CURRENT_LIST_DIR}/x86_test.cpp LIBS hart_cpu_sets_under_test)
