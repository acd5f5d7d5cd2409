/* MUL_MAT of F32 weights and activations (TensorFMA32) on the matrix engine: et_engine.h. */
#include "et_engine.h"

ET_KERNEL(mul_mat_f32_matrix_engine) { et_engine_mul_mat(params, env, ET_TYPE_F32); }
