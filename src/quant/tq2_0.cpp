// TQ2_0: ternary weights at 2 bits each, packed as Q2_K packs its levels (unpack_k_crumbs);
// a stored value v stands for v - 1.
#include "quant/k_quant_util.h"
#include "quant/ternary.h"

namespace hart::quant {
namespace {

void levels(const block_tq2_0& b, int8_t* q) {
  unpack_k_crumbs(b.qs, q);
  for (int j = 0; j < QK_K; j++) q[j] = int8_t(q[j] - 1);
}

void pack(const uint8_t* trits, block_tq2_0& b) { pack_k_crumbs(trits, b.qs); }

}  // namespace

Codec codec_tq2_0() { return ternary_codec<block_tq2_0, levels, pack>(); }

}  // namespace hart::quant
