# Finds MLX's C++ library in the pinned wheel and, for the CUDA wheel, what its CMake
# config needs at configure time. Defines the imported target `mlx` and HERON_MLX_BACKEND_USED.
#
#   HERON_MLX_SITE     site-packages holding mlx/ (default: HERON_VENV's)
#   HERON_MLX_BACKEND  auto | cpu | cuda: auto reads which wheel (mlx-cpu or mlx-cuda-13)
#                      installed mlx/; cpu or cuda insist on that one.
set(HERON_MLX_SITE "" CACHE PATH "site-packages directory holding mlx/ (default: HERON_VENV's)")
set(HERON_MLX_BACKEND "auto" CACHE STRING "MLX backend wheel: auto, cpu or cuda")
set_property(CACHE HERON_MLX_BACKEND PROPERTY STRINGS auto cpu cuda)

if(HERON_MLX_SITE)
  set(_site "${HERON_MLX_SITE}")
else()
  file(GLOB _site "${HERON_VENV}/lib/python3*/site-packages")
  list(GET _site 0 _site)
endif()
if(NOT EXISTS "${_site}/mlx/share/cmake/MLX")
  message(FATAL_ERROR "no MLX C++ library in '${_site}': install the pinned mlx-cpu or "
                      "mlx-cuda-13 wheel there (see README), or set HERON_MLX_SITE")
endif()

file(GLOB _cuda_wheel "${_site}/mlx_cuda_13-*.dist-info")
if(_cuda_wheel)
  set(_found cuda)
else()
  set(_found cpu)
endif()
if(NOT HERON_MLX_BACKEND STREQUAL "auto" AND NOT HERON_MLX_BACKEND STREQUAL _found)
  message(FATAL_ERROR "HERON_MLX_BACKEND=${HERON_MLX_BACKEND} but '${_site}/mlx' comes from the "
                      "${_found} wheel")
endif()
set(HERON_MLX_BACKEND_USED ${_found})

if(_found STREQUAL "cuda")
  # MLXConfig.cmake calls find_dependency(CUDAToolkit) and its FindCUDNN. Prefer a system
  # toolkit (nvcc on PATH, CUDAToolkit_ROOT or /usr/local/cuda); without one, use the
  # runtime and headers of the nvidia-* wheels the CUDA wheel depends on.
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND AND EXISTS "${_site}/nvidia/cu13")
    # The wheels: nvcc from nvidia-cuda-nvcc (FindCUDAToolkit insists on it), and only
    # versioned runtime libraries (libcudart.so.13), which find_library's `cudart` misses.
    set(CUDAToolkit_ROOT "${_site}/nvidia/cu13")
    find_library(CUDA_CUDART NAMES cudart libcudart.so.13 PATHS "${_site}/nvidia/cu13/lib"
                 NO_DEFAULT_PATH)
    find_package(CUDAToolkit REQUIRED)
  endif()
  foreach(_pkg cudnn cu13 cublas cuda_nvrtc cufft cusolver nccl)
    if(EXISTS "${_site}/nvidia/${_pkg}/lib")
      list(APPEND _wheel_lib_dirs "${_site}/nvidia/${_pkg}/lib")
    endif()
  endforeach()
  if(EXISTS "${_site}/nvidia/cudnn/include")
    set(CUDNN_INCLUDE_PATH "${_site}/nvidia/cudnn/include")
    set(CUDNN_LIBRARY_PATH "${_site}/nvidia/cudnn/lib")
  endif()
endif()

if(_found STREQUAL "cuda" AND NOT TARGET CUDA::cuda_driver)
  add_library(CUDA::cuda_driver INTERFACE IMPORTED)  # libmlx.so names it; see the stub below
endif()
find_package(MLX CONFIG REQUIRED HINTS "${_site}/mlx/share/cmake/MLX" NO_DEFAULT_PATH)

if(_found STREQUAL "cuda")
  # libmlx.so needs libcuda.so.1 (the driver) and the CUDA libraries: link the driver
  # stub and tell the linker where the rest live, so a machine without a GPU can build.
  list(APPEND _wheel_lib_dirs ${CUDAToolkit_LIBRARY_DIR})
  list(JOIN _wheel_lib_dirs ":" _rpath_link)
  if(CUDA_cuda_driver_LIBRARY)
    target_link_libraries(mlx INTERFACE "${CUDA_cuda_driver_LIBRARY}")
  else()
    # No driver stub (the wheels carry none): libcuda.so.1 is resolved at run time.
    target_link_options(mlx INTERFACE "-Wl,--allow-shlib-undefined")
  endif()
  target_link_options(mlx INTERFACE "-Wl,-rpath-link,${_rpath_link}")
endif()
message(STATUS "MLX ${MLX_VERSION} (${_found} backend) from ${_site}/mlx")
