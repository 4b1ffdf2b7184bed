#pragma once
// The body of every CPU primitive's eval_cpu here: allocate the output, register the
// arrays with the stream's encoder, and run `task(inputs, out)` on the stream's thread
// in stream order. The task gets weak copies, as MLX's own CPU primitives do: the
// evaluator keeps the buffers alive until the task has run.
#include <utility>
#include <vector>

#include <mlx/allocator.h>
#include <mlx/array.h>
#include <mlx/backend/cpu/encoder.h>

namespace heron::kernels {

template <class Task>
void run_on_cpu_stream(const mlx::core::Stream& stream, const std::vector<mlx::core::array>& inputs,
                       mlx::core::array& out, Task task) {
  namespace mx = mlx::core;
  out.set_data(mx::allocator::malloc(out.nbytes()));
  auto& encoder = mx::cpu::get_command_encoder(stream);
  std::vector<mx::array> weak;
  weak.reserve(inputs.size());
  for (const auto& in : inputs) {
    encoder.set_input_array(in);
    weak.push_back(mx::array::unsafe_weak_copy(in));
  }
  encoder.set_output_array(out);
  encoder.dispatch([weak = std::move(weak), out = mx::array::unsafe_weak_copy(out),
                    task = std::move(task)]() mutable { task(weak, out); });
}

}  // namespace heron::kernels
