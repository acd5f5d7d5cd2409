/* MUL_MAT of F16 weights against F16 activations (TensorFMA16A32) on the matrix engine: et_engine.h. */
#include "et_engine.h"

ET_KERNEL(mul_mat_f16_matrix_engine) { et_engine_mul_mat(params, env, ET_TYPE_F16); }
