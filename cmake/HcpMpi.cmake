# HCP_WITH_MPI=AUTO|ON|OFF. AUTO builds the MPI backend (libhcp_mpi.so) when CMake's FindMPI finds an MPI C library
# (Open MPI from Debian's libopenmpi-dev); ON makes its absence an error; OFF never looks. Sets HCP_MPI_ENABLED and
# HCP_MPIEXEC (the launcher the tests run, with the flags this machine needs).
set(HCP_MPI_ENABLED OFF)
string(TOUPPER "${HCP_WITH_MPI}" _hcp_mpi_mode)
if(NOT _hcp_mpi_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "HCP_WITH_MPI must be AUTO, ON or OFF (got '${HCP_WITH_MPI}')")
endif()
if(NOT _hcp_mpi_mode STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(HCP_MPI_ENABLED ON)
    message(STATUS "hcp: MPI backend enabled (${MPI_C_LIBRARY_VERSION_STRING}; launcher ${MPIEXEC_EXECUTABLE})")
  elseif(_hcp_mpi_mode STREQUAL "ON")
    message(FATAL_ERROR "HCP_WITH_MPI=ON but no MPI C library was found (install libopenmpi-dev)")
  else()
    message(STATUS "hcp: MPI backend disabled (no MPI C library found)")
  endif()
endif()
