#pragma once
// Settings of MLX's backend that heron chooses for itself. MLX reads them from the
// environment once, when it makes its first GPU stream, so every program that uses
// MLX calls tune_mlx_backend() first thing in main(). A variable the user has set
// is left as it is.

namespace heron {

void tune_mlx_backend();

}  // namespace heron
