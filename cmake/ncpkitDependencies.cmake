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
#   ncpkit::tinyxml2     TinyXML-2 (libtinyxml2-dev): MuJoCo MJCF scene files
# Sets ncpkit_DEPENDENCIES_FOUND and, when something is missing, ncpkit_DEPENDENCIES_MISSING.

# A library of one header and one library file: finds both (NCPKIT_<NAME>_INCLUDE_DIR,
# NCPKIT_<NAME>_LIBRARY; also under hdf5/serial, where Debian's serial HDF5 lives), appends what
# is missing to the caller's `missing`, and defines the imported target ncpkit::<name> (IMPORTED
# options in ARGN) when both are found.
macro(ncpkit_find_header_library name header library package)
  string(TOUPPER "${name}" _upper)
  find_path(NCPKIT_${_upper}_INCLUDE_DIR ${header} PATH_SUFFIXES hdf5/serial)
  find_library(NCPKIT_${_upper}_LIBRARY ${library} PATH_SUFFIXES hdf5/serial)
  if(NOT NCPKIT_${_upper}_INCLUDE_DIR OR NOT NCPKIT_${_upper}_LIBRARY)
    list(APPEND missing "${header} and lib${library} (${package})")
  elseif(NOT TARGET ncpkit::${name})
    add_library(ncpkit::${name} INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::${name} PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_${_upper}_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${NCPKIT_${_upper}_LIBRARY}")
  endif()
endmacro()

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
  find_path(NCPKIT_JSON_INCLUDE_DIR nlohmann/json_fwd.hpp)
  if(NOT NCPKIT_JSON_INCLUDE_DIR)
    list(APPEND missing "nlohmann/json_fwd.hpp (nlohmann-json3-dev)")
  endif()
  ncpkit_find_header_library(hdf5 hdf5.h hdf5 libhdf5-dev ${ARGN})
  ncpkit_find_header_library(qhull libqhull_r/libqhull_r.h qhull_r libqhull-dev ${ARGN})
  ncpkit_find_header_library(tinyobjloader tiny_obj_loader.h tinyobjloader_double
                             libtinyobjloader-dev ${ARGN})
  ncpkit_find_header_library(tinyxml2 tinyxml2.h tinyxml2 libtinyxml2-dev ${ARGN})
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
  if(NOT TARGET ncpkit::json)
    add_library(ncpkit::json INTERFACE IMPORTED ${ARGN})
    set_target_properties(ncpkit::json PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${NCPKIT_JSON_INCLUDE_DIR}")
  endif()
  set(ncpkit_DEPENDENCIES_FOUND TRUE PARENT_SCOPE)
endfunction()
