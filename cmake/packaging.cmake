# `cmake --install` and `cpack` (a .deb) for the two builds:
#   -DSHOAL_WORKER_ONLY=ON: package shoal-worker, the daemon a device runs,
#     with its systemd unit, /etc/shoal/worker.yaml and its system user;
#   the full build: package shoal, the tool (plan, run, serve, ...), with
#     the libtorch module `shoal lcp train` loads (not in the arm64 build,
#     SHOAL_TORCH=OFF), and serve's systemd unit, /etc/shoal/serve.yaml and
#     its system user.
# docs/packaging.md tells how to build, install and run them.
include(GNUInstallDirs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "shoal developers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()

if(SHOAL_WORKER_ONLY)
  install(TARGETS shoal-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The unit names the binary where this install puts it: /usr/bin in the
  # package, PREFIX/bin for `cmake --install --prefix PREFIX`; its config
  # in /etc for /usr, PREFIX/etc otherwise.
  install(CODE "set(SHOAL_PACKAGING_DIR \"${CMAKE_SOURCE_DIR}/packaging\")
                set(SHOAL_STAGE \"${CMAKE_BINARY_DIR}/packaging\")")
  install(CODE [[
    if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
      set(etc /etc)
    else()
      set(etc "${CMAKE_INSTALL_PREFIX}/etc")
    endif()
    file(READ "${SHOAL_PACKAGING_DIR}/shoal-worker.service" unit)
    string(REPLACE "/usr/bin/" "${CMAKE_INSTALL_PREFIX}/bin/" unit "${unit}")
    string(REPLACE "/usr/share/" "${CMAKE_INSTALL_PREFIX}/share/" unit "${unit}")
    string(REPLACE "/etc/shoal/" "${etc}/shoal/" unit "${unit}")
    file(WRITE "${SHOAL_STAGE}/shoal-worker.service" "${unit}")
    file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system"
         TYPE FILE FILES "${SHOAL_STAGE}/shoal-worker.service")
    file(INSTALL DESTINATION "${etc}/shoal" TYPE FILE
         FILES "${SHOAL_PACKAGING_DIR}/worker.yaml")
    file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/sysusers.d"
         TYPE FILE FILES "${SHOAL_PACKAGING_DIR}/shoal-worker.sysusers"
         RENAME shoal-worker.conf)
  ]])
  install(FILES docs/packaging.md docs/cli.md docs/security.md
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/shoal-worker)
  set(CPACK_PACKAGE_NAME shoal-worker)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
      "shoal worker: one device of a distributed neural-network inference")
  # Named, not found by dpkg-shlibdeps: a cross build's arm64 libraries
  # are in a sysroot dpkg does not know. Debian 12's runtime packages of
  # what the worker links.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6, libgcc-s1, libstdc++6, libgomp1, libdnnl2, libxnnpack0, libpthreadpool0, libgrpc++1.51, libgrpc29, libabsl20220623, libprotobuf32, libyaml-cpp0.7, libssl3, liblz4-1, libavahi-client3, libavahi-common3, libprometheus-cpp-core1.0, libcpp-httplib0.11")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
      ${CMAKE_SOURCE_DIR}/packaging/conffiles
      ${CMAKE_SOURCE_DIR}/packaging/postinst
      ${CMAKE_SOURCE_DIR}/packaging/prerm
      ${CMAKE_SOURCE_DIR}/packaging/postrm)
else()
  install(TARGETS shoal RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # src/train/trainer.cc looks for the module in ../lib/shoal from the
  # binary (a private directory, not the multiarch library path).
  if(SHOAL_TORCH)
    install(TARGETS shoal_torch LIBRARY DESTINATION lib/shoal)
  endif()
  install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
  install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
  # The coordinator as a service: shoal-serve.service, /etc/shoal/serve.yaml
  # and the user it runs as, placed as the worker's are above (the unit's
  # paths under the install prefix).
  install(CODE "set(SHOAL_PACKAGING_DIR \"${CMAKE_SOURCE_DIR}/packaging\")
                set(SHOAL_STAGE \"${CMAKE_BINARY_DIR}/packaging\")")
  install(CODE [[
    if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
      set(etc /etc)
    else()
      set(etc "${CMAKE_INSTALL_PREFIX}/etc")
    endif()
    file(READ "${SHOAL_PACKAGING_DIR}/shoal-serve.service" unit)
    string(REPLACE "/usr/bin/" "${CMAKE_INSTALL_PREFIX}/bin/" unit "${unit}")
    string(REPLACE "/usr/share/" "${CMAKE_INSTALL_PREFIX}/share/" unit "${unit}")
    string(REPLACE "/etc/shoal/" "${etc}/shoal/" unit "${unit}")
    file(WRITE "${SHOAL_STAGE}/shoal-serve.service" "${unit}")
    file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system"
         TYPE FILE FILES "${SHOAL_STAGE}/shoal-serve.service")
    file(INSTALL DESTINATION "${etc}/shoal" TYPE FILE
         FILES "${SHOAL_PACKAGING_DIR}/serve.yaml")
    file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/sysusers.d"
         TYPE FILE FILES "${SHOAL_PACKAGING_DIR}/shoal-serve.sysusers"
         RENAME shoal-serve.conf)
  ]])
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
      ${CMAKE_SOURCE_DIR}/packaging/shoal-deb/conffiles
      ${CMAKE_SOURCE_DIR}/packaging/shoal-deb/postinst
      ${CMAKE_SOURCE_DIR}/packaging/shoal-deb/prerm
      ${CMAKE_SOURCE_DIR}/packaging/shoal-deb/postrm)
  set(CPACK_PACKAGE_NAME shoal)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
      "shoal: one neural-network inference across a cluster of small devices")
  if(CMAKE_CROSSCOMPILING)
    # dpkg-shlibdeps knows only the host's packages, not the sysroot's:
    # Debian 12's runtime packages of what the arm64 shoal links (the
    # worker's, and ONNX, GLPK, zlib, stb; no libtorch, SHOAL_TORCH=OFF). The
    # test Arm64Shoal checks that each library the binary needs is in one.
    set(CPACK_DEBIAN_PACKAGE_DEPENDS
        "libc6, libgcc-s1, libstdc++6, libgomp1, libdnnl2, libxnnpack0, libpthreadpool0, libgrpc++1.51, libgrpc29, libabsl20220623, libprotobuf32, libonnx1, libglpk40, zlib1g, libstb0, libyaml-cpp0.7, libssl3, liblz4-1, libavahi-client3, libavahi-common3, libprometheus-cpp-core1.0, libcpp-httplib0.11")
  else()
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  endif()
  # `shoal lcp train` reads Fashion-MNIST from Debian's package.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS dataset-fashion-mnist)
endif()
include(CPack)
