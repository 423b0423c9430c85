# OpenSSL from its static archives, for the targets that ask for it (the
# fleetbench client: cli/dispatch.h says why it is lean).
#
# Why per target: the client's call is a fresh process each time, and
# relocating the shared libcrypto was the largest part of what its dynamic
# loader did (docs/results-log.md, "The client binary"). fleetbenchd must
# keep the shared OpenSSL: cpp-httplib's and gloo's shared libraries load
# libssl and libcrypto anyway, and two OpenSSLs in one process would be two
# states.
#
# How: every fleetbench library that needs OpenSSL links fleetbench_openssl,
# and gRPC's own OpenSSL::SSL / OpenSSL::Crypto are pointed at it. It names
# the archives when the target being linked has the property
# FLEETBENCH_STATIC_OPENSSL set ($<TARGET_PROPERTY:...> in a usage
# requirement reads the target being linked) and the shared libraries
# otherwise. Off with -DFLEETBENCH_STATIC_DEPS=OFF, or where the archives
# are missing (libssl-dev ships them).

find_library(FLEETBENCH_SSL_ARCHIVE NAMES libssl.a)
find_library(FLEETBENCH_CRYPTO_ARCHIVE NAMES libcrypto.a)
add_library(fleetbench_openssl INTERFACE)
if(FLEETBENCH_STATIC_DEPS AND FLEETBENCH_SSL_ARCHIVE AND FLEETBENCH_CRYPTO_ARCHIVE)
  set(_static "$<BOOL:$<TARGET_PROPERTY:FLEETBENCH_STATIC_OPENSSL>>")
  target_link_libraries(fleetbench_openssl INTERFACE
    "$<${_static}:${FLEETBENCH_SSL_ARCHIVE}>" "$<${_static}:${FLEETBENCH_CRYPTO_ARCHIVE}>"
    "$<$<NOT:${_static}>:PkgConfig::SSL>" "$<$<NOT:${_static}>:PkgConfig::CRYPTO>"
    ${CMAKE_DL_LIBS} Threads::Threads)
  message(STATUS "fleetbench: OpenSSL static for targets with FLEETBENCH_STATIC_OPENSSL")
else()
  target_link_libraries(fleetbench_openssl INTERFACE PkgConfig::SSL PkgConfig::CRYPTO)
endif()

if(TARGET gRPC::grpc)
  get_target_property(_grpc_libs gRPC::grpc INTERFACE_LINK_LIBRARIES)
  if(_grpc_libs)
    list(TRANSFORM _grpc_libs REPLACE "^OpenSSL::(SSL|Crypto)$" "fleetbench_openssl")
    list(REMOVE_DUPLICATES _grpc_libs)
    set_target_properties(gRPC::grpc PROPERTIES INTERFACE_LINK_LIBRARIES "${_grpc_libs}")
  endif()
endif()
