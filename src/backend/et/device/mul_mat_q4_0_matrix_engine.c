/* MUL_MAT of Q4_0 weights dequantized to fp32 tiles (TensorFMA32) on the matrix engine: et_engine.h. */
#include "et_engine.h"

ET_KERNEL(mul_mat_q4_0_matrix_engine) { et_engine_mul_mat(params, env, ET_TYPE_Q4_0); }
