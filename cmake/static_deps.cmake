# Static linking of the RPC stack (a CLI call's fixed cost; docs/results-log.md,
# "A CLI call's fixed cost").
#
# Why: every `fleetbench history` or `rank` is a fresh process. Linked
# against Debian's shared gRPC, protobuf and Abseil it loads 70 shared
# libraries, and on a virtual machine the dynamic loader's page faults and
# relocations are most of a short call's time (measured: `--help` 27.8 ms of
# CPU shared, 16.0 ms static; docs/results-log.md). Debian ships the static
# archives beside the shared ones (libgrpc++-dev, libprotobuf-dev,
# libabsl-dev, libre2-dev, libc-ares-dev, zlib1g-dev), so no build change
# is needed on a fresh machine.
#
# How: after find_package, each imported target of those packages gets its
# `.a` in place of its `.so` (IMPORTED_LOCATION[_<CONFIG>]; re2's
# pkg-config target, which has no location, its INTERFACE_LINK_LIBRARIES).
# The shared location is kept in FLEETBENCH_SHARED_LIBRARY, because
# Debian's archives are built as position-independent executables' code, not
# PIC: they cannot go into a MODULE (R_X86_64_PC32 against a default-
# visibility symbol). fleetbench_absl_for_modules() below gives the libraries
# that are linked into the GPU modules shared Abseil when the target being
# linked is a MODULE and the static one otherwise.
#
# OpenSSL stays shared: cpp-httplib's shared library loads libssl and
# libcrypto anyway, and two OpenSSLs in one process would be two states.
#
# Off with -DFLEETBENCH_STATIC_DEPS=OFF; on by default where the archives
# exist (a target whose archive is missing keeps its shared library).

option(FLEETBENCH_STATIC_DEPS
  "Link gRPC, protobuf, Abseil, re2, c-ares and zlib from their static archives" ON)

# The `.a` beside a shared library path, or "" when there is none.
function(_fleetbench_archive_of shared out)
  set(${out} "" PARENT_SCOPE)
  if(shared MATCHES "^(.*)\\.so(\\.[0-9.]+)?$")
    set(_archive "${CMAKE_MATCH_1}.a")
    if(EXISTS "${_archive}")
      set(${out} "${_archive}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

function(_fleetbench_make_static target)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    # re2's pkg-config target: "-L<dir>;-lre2" in its link libraries.
    get_target_property(_libs ${target} INTERFACE_LINK_LIBRARIES)
    if(target STREQUAL "re2::re2" AND _libs)
      find_library(FLEETBENCH_RE2_ARCHIVE NAMES libre2.a)
      if(FLEETBENCH_RE2_ARCHIVE)
        set_target_properties(${target} PROPERTIES
          INTERFACE_LINK_LIBRARIES "${FLEETBENCH_RE2_ARCHIVE};Threads::Threads"
          FLEETBENCH_SHARED_LIBRARY "${_libs}")
      endif()
    endif()
    return()
  endif()
  get_target_property(_configs ${target} IMPORTED_CONFIGURATIONS)
  set(_props IMPORTED_LOCATION)
  if(_configs)
    foreach(_config IN LISTS _configs)
      list(APPEND _props IMPORTED_LOCATION_${_config})
    endforeach()
  endif()
  foreach(_prop IN LISTS _props)
    get_target_property(_shared ${target} ${_prop})
    if(NOT _shared)
      continue()
    endif()
    _fleetbench_archive_of("${_shared}" _archive)
    if(_archive)
      set_target_properties(${target} PROPERTIES
        ${_prop} "${_archive}"
        FLEETBENCH_SHARED_LIBRARY "${_shared}")
    endif()
  endforeach()
endfunction()

if(FLEETBENCH_STATIC_DEPS)
  get_directory_property(_fleetbench_imported IMPORTED_TARGETS)
  set(_fleetbench_static_count 0)
  foreach(_target IN LISTS _fleetbench_imported)
    if(_target MATCHES "^(absl|gRPC|protobuf|re2|c-ares)::" OR _target STREQUAL "ZLIB::ZLIB")
      if(_target STREQUAL "protobuf::libprotoc" OR _target STREQUAL "protobuf::protoc"
         OR _target MATCHES "^gRPC::.*_plugin$")
        continue()  # the code generators run at build time; leave them be
      endif()
      _fleetbench_make_static(${_target})
      get_target_property(_kept ${_target} FLEETBENCH_SHARED_LIBRARY)
      if(_kept)
        math(EXPR _fleetbench_static_count "${_fleetbench_static_count} + 1")
      endif()
    endif()
  endforeach()
  message(STATUS "fleetbench: ${_fleetbench_static_count} libraries linked from static archives")
endif()

# fleetbench_absl_for_modules(OUT absl::status absl::strings ...): what a
# library that is also linked into a MODULE should list for Abseil: the
# static targets for executables, the shared libraries (the targets' closure
# over INTERFACE_LINK_LIBRARIES) for a MODULE. The choice is made per
# linked target with $<TARGET_PROPERTY:TYPE>, which in a usage requirement
# reads the target being linked.
function(_fleetbench_shared_closure target out_var)
  set(_seen ${${out_var}})
  if(NOT TARGET ${target} OR ";${_seen};" MATCHES ";${target};")
    return()
  endif()
  list(APPEND _seen ${target})
  get_target_property(_deps ${target} INTERFACE_LINK_LIBRARIES)
  if(_deps)
    foreach(_dep IN LISTS _deps)
      if(_dep MATCHES "^absl::")
        _fleetbench_shared_closure(${_dep} _seen)
      endif()
    endforeach()
  endif()
  set(${out_var} ${_seen} PARENT_SCOPE)
endfunction()

function(fleetbench_absl_for_modules out)
  set(_is_module "$<STREQUAL:$<TARGET_PROPERTY:TYPE>,MODULE_LIBRARY>")
  set(_closure "")
  foreach(_target IN LISTS ARGN)
    _fleetbench_shared_closure(${_target} _closure)
  endforeach()
  set(_result "")
  foreach(_target IN LISTS ARGN)
    list(APPEND _result "$<$<NOT:${_is_module}>:${_target}>")
  endforeach()
  foreach(_target IN LISTS _closure)
    get_target_property(_shared ${_target} FLEETBENCH_SHARED_LIBRARY)
    if(_shared)
      list(APPEND _result "$<${_is_module}:${_shared}>")
    else()
      # Not swapped (header-only, or the option is off): the target as is.
      get_target_property(_type ${_target} TYPE)
      if(NOT _type STREQUAL "INTERFACE_LIBRARY")
        list(APPEND _result "$<${_is_module}:${_target}>")
      endif()
    endif()
  endforeach()
  list(APPEND _result "$<${_is_module}:Threads::Threads>")
  set(${out} ${_result} PARENT_SCOPE)
endfunction()
