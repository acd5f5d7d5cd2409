// llama.cpp's op-case list as hart graphs. test-backend-ops names each case by its op and a
// parameter string ("type_a=q8_0,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],...");
// its support reports (../shared/testdata/ops/<BACKEND>.csv) list 16,113 of them. ggml_case()
// rebuilds the case a row names over hart's ops, with ggml's shapes, views and input ranges, so
// `hart ops --cases FILE` answers on exactly llama.cpp's rows and the two reports diff line by
// line.
#pragma once

#include <string>
#include <vector>

#include "testing/op_cases.h"

namespace hart::testing {

struct CaseRow {
  std::string op_name;    // "MUL_MAT", "SILU", ...
  std::string op_params;  // as test-backend-ops prints them
};

// The rows of a test-backend-ops CSV report (the header names the columns; op_name and
// op_params are read), in file order. Throws hart::Error on a file that is not one.
std::vector<CaseRow> read_case_csv(const std::string& path);

// The case a row names. Its build throws hart::Error naming what hart's graph cannot express (an
// op hart does not have, or a variant of one: ALiBi, sinks, YaRN, an f16 operand, ...); `hart
// ops` reports such a case as not supported. max_nmse is test-backend-ops' threshold for it.
OpCase ggml_case(const CaseRow& row);

}  // namespace hart::testing
