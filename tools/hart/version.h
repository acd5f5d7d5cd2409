// hart --version (-V): what this binary is and what it would run here.
#pragma once

namespace hart::cli {

// Prints the version and source revision, the compiler and flags, and the CPU kernel set chosen
// on this machine (HART_ISA's when set) with the others it could run. Throws hart::Error when
// HART_ISA names a set this CPU or binary cannot run.
void print_version();

}  // namespace hart::cli
