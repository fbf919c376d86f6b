# The dependencies of ncpkit's libraries that ship no CMake package on Debian 12, as imported
# targets: used by ncpkit's own build and by the installed package (ncpkitConfig.cmake), so that
# both resolve them the same way.
#   ncpkit::suitesparse  KLU, UMFPACK, SPQR, CHOLMOD, AMD and SuiteSparse_config (headers and
#                        libraries)
#   ncpkit::jet          the header-only Jet type of Ceres (no Ceres library is linked)
#   ncpkit::hdf5         the HDF5 C library (libhdf5-dev, serial), for the FCLib reader
#   ncpkit::json         nlohmann-json's headers (nlohmann-json3-dev): scene files, and the
#                        stepper registry's reader interface (nlohmann/json_fwd.hpp)
#   ncpkit::qhull        Qhull's reentrant C library (libqhull-dev): convex hulls of the
#                        points of convex shapes
#   ncpkit::tinyobjloader  tinyobjloader in double precision (libtinyobjloader-dev): the
#                        vertices of OBJ mesh files
# Sets ncpkit_DEPENDENCIES_FOUND and, when something is missing, ncpkit_DEPENDENCIES_MISSING.

function(ncpkit_find_dependencies)
  set(missing "")
  find_path(NCPKIT_SUITESPARSE_INCLUDE_DIR klu.h PATH_SUFFIXES suitesparse)
  foreach(lib klu umfpack spqr cholmod amd suitesparseconfig)
    string(TOUPPER "${lib}" upper)
    find_library(NCPKIT_${upper}_LIBRARY ${lib})
    if(NOT NCPKIT_${upper}_LIBRARY)
      list(APPEND missing "lib${lib} (libsuitesparse-dev)")
    endif()
    list(APPEND libraries "${NCPKIT_${upper}_LIBRARY}")
  endforeach()
  if(NOT NCPKIT_SUITESPARSE_INCLUDE_DIR)
    list(APPEND missing "klu.h (libsuitesparse-dev)")
  endif()
  find_path(NCPKIT_CERES_INCLUDE_DIR ceres/jet.h)
  if(NOT NCPKIT_CERES_INCLUDE_DIR)
    list(APPEND missing "ceres/jet.h (libceres-dev)")
  endif()
  find_path(NCPKIT_HDF5_INCLUDE_DIR hdf5.h PATH_SUFFIXES hdf5/serial)
  find_library(NCPKIT_HDF5_LIBRARY hdf5 PATH_SUFFIXES hdf5/serial)
  if(NOT NCPKIT_HDF5_INCLUDE_DIR OR NOT NCPKIT_HDF5_LIBRARY)
    list(APPEND missing "hdf5.h and libhdf5 (libhdf5-dev)")
  endif()
  find_path(NCPKIT_JSON_INCLUDE_DIR nlohmann/json_fwd.hpp)
  if(NOT NCPKIT_JSON_INCLUDE_DIR)
    list(APPEND missing "nlohmann/json_fwd.hpp (nlohmann-json3-dev)")
  endif()
  find_path(NCPKIT_QHULL_INCLUDE_DIR libqhull_r/libqhull_r.h)
  find_library(NCPKIT_QHULL_LIBRARY qhull_r)
  if(NOT NCPKIT_QHULL_INCLUDE_DIR OR NOT NCPKIT_QHULL_LIBRARY)
    list(APPEND missing "libqhull_r/libqhull_r.h and libqhull_r (libqhull-dev)")
  endif()
  find_path(NCPKIT_TINYOBJLOADER_INCLUDE_DIR tiny_obj_loader.h)
  find_library(NCPKIT_TINYOBJLOADER_LIBRARY tinyobjloader_double)
  if(NOT NCPKIT_TINYOBJLOADER_INCLUDE_DIR OR NOT NCPKIT_TINYOBJLOADER_LIBRARY)
    list(APPEND missing "tiny_obj_loader.h and libtinyobjloader_double (libtinyobjloader-dev)")
  endif()
  if(missing)
    set(ncpkit_DEPENDENCIES_FOUND FALSE PARENT_SCOPE)
    set(ncpkit_DEPENDENCIES_MISSING "${missing}" PARENT_SCOPE)
    return()
  endif()
  if(NOT TARGET ncpkit::suitesparse)
    add_library(ncpkit::suitesparse INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::suitesparse PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_SUITESPARSE_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${libraries}")
  endif()
  if(NOT TARGET ncpkit::jet)
    add_library(ncpkit::jet INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::jet PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_CERES_INCLUDE_DIR}")
  endif()
  if(NOT TARGET ncpkit::hdf5)
    add_library(ncpkit::hdf5 INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::hdf5 PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_HDF5_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${NCPKIT_HDF5_LIBRARY}")
  endif()
  if(NOT TARGET ncpkit::json)
    add_library(ncpkit::json INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::json PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_JSON_INCLUDE_DIR}")
  endif()
  if(NOT TARGET ncpkit::qhull)
    add_library(ncpkit::qhull INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::qhull PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_QHULL_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${NCPKIT_QHULL_LIBRARY}")
  endif()
  if(NOT TARGET ncpkit::tinyobjloader)
    add_library(ncpkit::tinyobjloader INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::tinyobjloader PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_TINYOBJLOADER_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${NCPKIT_TINYOBJLOADER_LIBRARY}")
  endif()
  set(ncpkit_DEPENDENCIES_FOUND TRUE PARENT_SCOPE)
endfunction()
