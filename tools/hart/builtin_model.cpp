// The assembler's .incbin puts models/stories260K.gguf (HART_BUILTIN_MODEL, its absolute path)
// into read-only data at link time: GCC and clang, x86-64 and riscv64 alike, with no generated
// source. CMake lists the file as this object's dependency; ccache declines to cache a source
// holding .incbin, so a changed model is never served from the cache.
#include "builtin_model.h"

#ifndef HART_BUILTIN_MODEL
#error "HART_BUILTIN_MODEL must name the GGUF file to embed"
#endif

asm(".pushsection .rodata.hart_builtin_model, \"a\", @progbits\n"
    ".balign 64\n"
    ".globl hart_builtin_model_begin\n"
    "hart_builtin_model_begin:\n"
    ".incbin \"" HART_BUILTIN_MODEL "\"\n"
    ".globl hart_builtin_model_end\n"
    "hart_builtin_model_end:\n"
    ".popsection\n");

extern "C" const uint8_t hart_builtin_model_begin[];
extern "C" const uint8_t hart_builtin_model_end[];

namespace hart::cli {

std::span<const uint8_t> builtin_model_bytes() {
  return {hart_builtin_model_begin, size_t(hart_builtin_model_end - hart_builtin_model_begin)};
}

}  // namespace hart::cli
