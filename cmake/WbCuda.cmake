# CUDA is optional. When nvcc is found the CUDA variants are compiled and the
# kernels library links cudart, cuBLAS, cuBLASLt, cuDNN (when present) and NVTX;
# otherwise wb is a CPU-only build that passes every test.
#
# Architectures: -DCMAKE_CUDA_ARCHITECTURES=... wins; else the compute capability
# of the GPU that nvidia-smi reports; else 80 and 90.

set(WB_HAVE_CUDA OFF)
set(WB_HAVE_CUDNN OFF)
set(WB_CUDA_SUMMARY "")

if(NOT WB_ENABLE_CUDA)
  return()
endif()

if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(WB_NVCC nvcc HINTS /usr/local/cuda/bin)
  if(WB_NVCC)
    set(CMAKE_CUDA_COMPILER ${WB_NVCC})
  endif()
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "wb: nvcc not found, building the CPU backend only")
  return()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(_wb_archs "80;90")
  find_program(WB_NVIDIA_SMI nvidia-smi)
  if(WB_NVIDIA_SMI)
    execute_process(COMMAND ${WB_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE _wb_caps RESULT_VARIABLE _wb_smi_rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_wb_smi_rc EQUAL 0 AND _wb_caps MATCHES "^[0-9]+\\.[0-9]+")
      string(REGEX MATCH "^[0-9]+\\.[0-9]+" _wb_cap "${_wb_caps}")
      string(REPLACE "." "" _wb_archs "${_wb_cap}")
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_wb_archs} CACHE STRING "CUDA architectures to compile for")
endif()

set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(WB_HAVE_CUDA ON)

find_path(WB_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
find_library(WB_CUDNN_LIBRARY cudnn
             HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
                   ${CUDAToolkit_LIBRARY_ROOT}/lib64 /usr/lib/x86_64-linux-gnu)
if(WB_CUDNN_INCLUDE_DIR AND WB_CUDNN_LIBRARY)
  set(WB_HAVE_CUDNN ON)
  add_library(wb_cudnn INTERFACE)
  target_include_directories(wb_cudnn SYSTEM INTERFACE ${WB_CUDNN_INCLUDE_DIR})
  target_link_libraries(wb_cudnn INTERFACE ${WB_CUDNN_LIBRARY})
else()
  message(WARNING "wb: cuDNN not found; the cuDNN variants are left out of this build")
endif()

set(WB_CUDA_SUMMARY ", nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}, cuDNN ${WB_HAVE_CUDNN}")
