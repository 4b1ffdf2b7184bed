#include "heron/core/mlx_tuning.h"

#include <cstdlib>

namespace heron {

void tune_mlx_backend() {
#ifdef HERON_MLX_CUDA
  // MLX's CUDA backend records kernels into CUDA graphs and launches one every
  // MLX_MAX_OPS_PER_BUFFER kernels or MLX_MAX_MB_PER_BUFFER MB of inputs (30 and 400 on
  // an H100/H200). A decode step of an 8B model is ~450 kernels over 16 GB of weights,
  // so those limits cut it into ~40 graphs, each paying its own update, launch and
  // completion callback on the host, which small models are bound by.
  // docs/benchmarks.md (run J) has the sweep these values come from.
  setenv("MLX_MAX_OPS_PER_BUFFER", "100", 0);
  setenv("MLX_MAX_MB_PER_BUFFER", "1000", 0);
#endif
}

}  // namespace heron
