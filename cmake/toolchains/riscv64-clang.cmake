# Cross build for riscv64 Linux with clang-19 (GCC 12 has no riscv_vector.h; older clang lacks the
# __riscv_ intrinsic names) against Debian's riscv64 cross sysroot, tests run under qemu-user.
#   cmake -S . -B build-riscv -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/riscv64-clang.cmake \
#         [-DHART_RISCV_MARCH=rv64gc|rv64gcv|rv64gcv_zvfh]
# HART_RISCV_MARCH is the baseline of the whole binary. The RVV kernels are compiled with their
# own -march (src/backend/cpu/arch/riscv) and chosen at run time, so an rv64gc binary runs on a core
# without V and still uses V where the CPU has it. rv64gc is the default because with V in the
# baseline clang auto-vectorizes everything, and Debian 12's libgcc unwinder aborts on the
# VLENB-based frame expressions of functions that spill vector registers (any exception thrown
# through one ends the process); QEMU 7.2 also aborts on the vfncvt.rtz it emits.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)

set(HART_RISCV_MARCH rv64gc CACHE STRING "Baseline -march of the riscv64 build")
set_property(CACHE HART_RISCV_MARCH PROPERTY STRINGS rv64gc rv64gcv rv64gcv_zvfh)
set(HART_RISCV_SYSROOT /usr/riscv64-linux-gnu CACHE PATH "riscv64 cross sysroot (Debian)")
get_filename_component(_hart_rv_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(HART_RISCV_DEPS "${_hart_rv_root}/build-riscv-deps/prefix" CACHE PATH
    "riscv64 GoogleTest / PCRE2 / header-only configs built by scripts/riscv-deps")
# try_compile projects re-read this file: give them the same -march and prefix.
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES HART_RISCV_MARCH HART_RISCV_DEPS)

# -march/-mabi go into the compiler definition itself so that a user's CMAKE_CXX_FLAGS cannot drop
# them (it replaces the *_FLAGS_INIT variables, not the compiler arguments).
set(_hart_rv_target --target=riscv64-linux-gnu --gcc-toolchain=/usr
    -march=${HART_RISCV_MARCH} -mabi=lp64d)
set(CMAKE_C_COMPILER clang-19 ${_hart_rv_target})
# -U__DEPRECATED: Debian's riscv64 libstdc++ 12 headers call their own deprecated
# get_temporary_buffer from std::stable_sort, and clang 19 reports that inside the system header
# (an error under -Werror). Without __DEPRECATED libstdc++ stops marking its names deprecated;
# the project's own [[deprecated]] still warns.
set(CMAKE_CXX_COMPILER clang++-19 ${_hart_rv_target} -U__DEPRECATED)
set(CMAKE_ASM_COMPILER clang-19 ${_hart_rv_target})

# Headers come from the sysroot, but the link must not use --sysroot: Debian's cross libc.so is a
# linker script with absolute paths that lld and bfd then look up inside the sysroot and miss.
set(CMAKE_SYSROOT_COMPILE ${HART_RISCV_SYSROOT})
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-fuse-ld=lld")

# Libraries, headers and packages come from the riscv64 prefix and the sysroot only, never from
# the host's /usr; programs (ninja, pkg-config) from the host.
set(CMAKE_FIND_ROOT_PATH ${HART_RISCV_DEPS} ${HART_RISCV_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR} "${HART_RISCV_DEPS}/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# CTest runs every test binary through this wrapper; it reads RVV_VLEN / HART_QEMU_V at test time,
# so one build is tested at every vector length.
set(CMAKE_CROSSCOMPILING_EMULATOR "${_hart_rv_root}/scripts/qemu-rv64")
