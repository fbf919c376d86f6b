# Install rules: headers under include/ncpkit/<layer>/, the libraries, the ncpkit program and
# its scenes, a CMake package (find_package(ncpkit): targets ncpkit::solvers, ncpkit::readers,
# ncpkit::fixtures, ncpkit::dynamics, ncpkit::contact, ncpkit::integrators) and a pkg-config
# file (ncpkit.pc).
include(CMakePackageConfigHelpers)

set(NCPKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ncpkit)

foreach(name IN LISTS NCPKIT_LIBRARIES)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${name}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ncpkit/${name}
          FILES_MATCHING PATTERN "*.h"
          # scene.cc's JSON helpers: internal, and they need nlohmann-json
          PATTERN "json_reader.h" EXCLUDE)
endforeach()
list(TRANSFORM NCPKIT_LIBRARIES PREPEND ncpkit_ OUTPUT_VARIABLE library_targets)
install(TARGETS ${library_targets} EXPORT ncpkitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ncpkit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ncpkit/scenes)

install(EXPORT ncpkitTargets NAMESPACE ncpkit:: DESTINATION ${NCPKIT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ncpkitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ncpkitConfig.cmake
                              INSTALL_DESTINATION ${NCPKIT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ncpkitConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ncpkitConfig.cmake ${PROJECT_BINARY_DIR}/ncpkitConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/ncpkitDependencies.cmake
        DESTINATION ${NCPKIT_CMAKE_DIR})

# pkg-config: paths relative to the .pc file, so that `cmake --install --prefix P` may choose P.
# Static libraries: the SuiteSparse, HDF5, Qhull, tinyobjloader and TinyXML-2 libraries go in Libs;
# shared:
# in Libs.private.
file(RELATIVE_PATH pc_to_prefix ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
set(pc_cflags "-I\${includedir}/ncpkit -I\${includedir}")
foreach(dir ${NCPKIT_SUITESPARSE_INCLUDE_DIR} ${NCPKIT_CERES_INCLUDE_DIR} ${NCPKIT_JSON_INCLUDE_DIR})
  if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)  # never -I/usr/include
    string(APPEND pc_cflags " -I${dir}")
  endif()
endforeach()
set(pc_libs "-L\${libdir}")
foreach(name integrators contact dynamics readers fixtures solvers)
  string(APPEND pc_libs " -lncpkit_${name}")
endforeach()
set(pc_deps "")
foreach(lib ${NCPKIT_KLU_LIBRARY} ${NCPKIT_UMFPACK_LIBRARY} ${NCPKIT_SPQR_LIBRARY}
            ${NCPKIT_CHOLMOD_LIBRARY} ${NCPKIT_AMD_LIBRARY}
            ${NCPKIT_SUITESPARSECONFIG_LIBRARY} ${NCPKIT_HDF5_LIBRARY} ${NCPKIT_QHULL_LIBRARY}
            ${NCPKIT_TINYOBJLOADER_LIBRARY} ${NCPKIT_TINYXML2_LIBRARY})
  get_filename_component(dir ${lib} DIRECTORY)
  get_filename_component(file ${lib} NAME_WE)
  string(REGEX REPLACE "^lib" "" file ${file})
  if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND pc_deps " -L${dir}")
  endif()
  string(APPEND pc_deps " -l${file}")
endforeach()
string(APPEND pc_deps " -pthread")  # the steppers' worker pools
if(BUILD_SHARED_LIBS)
  set(pc_libs_private "${pc_deps}")
else()
  string(APPEND pc_libs "${pc_deps}")
  set(pc_libs_private "")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/ncpkit.pc.in ${PROJECT_BINARY_DIR}/ncpkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ncpkit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
