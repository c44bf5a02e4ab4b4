# The Python that has torch for hcp.torch's tests and example: Debian's python3-torch is for /usr/bin/python3 (the
# python3 first on PATH may be another build). Sets HCP_TORCH_PYTHON, empty when that Python has no torch.
set(HCP_TORCH_PYTHON "")
find_program(HCP_SYSTEM_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(HCP_SYSTEM_PYTHON)
  execute_process(COMMAND ${HCP_SYSTEM_PYTHON} -c "import torch" RESULT_VARIABLE _hcp_torch_rc OUTPUT_QUIET ERROR_QUIET)
  if(_hcp_torch_rc EQUAL 0)
    set(HCP_TORCH_PYTHON ${HCP_SYSTEM_PYTHON})
  endif()
endif()
if(NOT HCP_TORCH_PYTHON)
  message(STATUS "hcp: /usr/bin/python3 has no torch; hcp.torch's tests and example are not registered "
                 "(scripts/lib.sh installs python3-torch)")
endif()
