/* SSM_CONV (F32): ggml's causal depthwise convolution, y(c, t, s) = sum_k sx(t + k, c, s) *
 * kernel(k, c), summed in k order as the CPU does. An output row is one step t of sequence s over
 * the channels; channel c's inputs are row (c, s) of sx, its weights row c of the kernel. Outputs
 * are independent, so even a decode step's single row is split over every hart. */
#include "et_rows.h"

static void ssm_conv_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_ssm_conv_params* p = (const et_ssm_conv_params*)job->params;
  const et_tensor* sx = &p->sx;
  const et_tensor* w = &p->kernel;
  const int64_t k = w->ne[0], t = idx[0];
  const uint8_t* x = et_rows_data(job, sx) + idx[1] * sx->nb[2] + t * sx->nb[0];
  const uint8_t* wd = et_rows_data(job, w);
  float* out = et_rows_out(job, row);
  for (int64_t c = i0; c < i1; c++) {
    const uint8_t* xc = x + c * sx->nb[1];
    const uint8_t* wc = wd + c * w->nb[1];
    float sum = 0.0f;
    for (int64_t j = 0; j < k; j++) sum += *(const float*)(xc + j * sx->nb[0]) * *(const float*)(wc + j * w->nb[0]);
    out[c] = sum;
  }
}

ET_KERNEL(ssm_conv) {
  const et_ssm_conv_params* p = (const et_ssm_conv_params*)params;
  const et_tensor* sx = &p->sx;
  const et_tensor* w = &p->kernel;
  et_require(env, sx->type == ET_TYPE_F32 && w->type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32,
             "ssm_conv: tensors must be F32");
  et_require(env, w->ne[2] == 1 && w->ne[3] == 1 && sx->ne[3] == 1 && sx->ne[1] == w->ne[1] && sx->ne[0] >= w->ne[0],
             "ssm_conv: sx does not fit the kernel");
  et_require(env, p->dst.ne[0] == w->ne[1] && p->dst.ne[1] == sx->ne[0] - w->ne[0] + 1 && p->dst.ne[2] == sx->ne[2] &&
                      p->dst.ne[3] == 1,
             "ssm_conv: dst must be (channels, steps, sequences)");
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, ssm_conv_row, 0.0f);
  const uint64_t k = (uint64_t)w->ne[0];
  et_count(env, 2 * k * n, 8 * k * n, 4 * n);
}
