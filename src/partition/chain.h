// The fully-distributed paper's view of a model when it decides how to split
// and fuse layers (§3–4): a chain of weight layers, each only its sizes.
// Layers between them (activations, pooling, ...) are folded into the flags.
#ifndef SHOAL_PARTITION_CHAIN_H_
#define SHOAL_PARTITION_CHAIN_H_

#include <cstdint>
#include <string>

namespace shoal {

struct ChainLayer {
  std::string name;
  int64_t M = 0;  // input elements  (paper M_l)
  int64_t K = 0;  // output elements (paper K_l)
  int64_t Q = 0;  // weights         (paper Q_l)
  int64_t R = 0;  // multiplications (paper R_l)
  // This layer's input derives channel by channel from the previous layer's
  // output (through elementwise ops, pooling, flatten), so a device that
  // computed some of its channels by LOP reuses them instead of receiving
  // them.
  bool reuses_prev = false;
  // How many of the M input elements so derive when they are not all of
  // them: one input of a concat (YOLOv2's layer 29 reads layer 24's output
  // and a reorg). 0 means all of M.
  int64_t reuse_elements = 0;
  // This layer (LOP) and the next (LIP) may be fused: the output feeds only
  // the next layer, through elementwise ops.
  bool fusable_with_next = false;
  // What a split divides: input and output channels of a conv, features of
  // an fc (0 means M and K themselves). Devices get whole units, so M and K
  // must be multiples of them; the plan builder splits the same units.
  int64_t m_units = 0;
  int64_t k_units = 0;
  // The input is a concat of tensors made at different points of the model
  // (YOLOv2's layer 29: a reorg of layer 26 and layer 24's output).
  bool input_is_concat = false;
  // What an LOP device sends back of its output slice: the output after the
  // channel-local ops it runs itself (activation, pooling), which shrink it
  // before it travels. 0 means K.
  int64_t k_sent = 0;
};

}  // namespace shoal

#endif  // SHOAL_PARTITION_CHAIN_H_
