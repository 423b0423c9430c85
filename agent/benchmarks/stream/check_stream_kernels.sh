#!/usr/bin/env bash
# check_stream_kernels.sh OBJECT... — CTest stream_kernels_are_loops: the
# object of stream_kernels.cc among OBJECTs must define the STREAM loops
# and call no memmove, memcpy or memset (stream_kernels.h says why).
# Exit 0 clean, 1 a call was found, 2 the loops are missing, 3 no object.
set -u
for object in "$@"; do
  case $object in
    *stream_kernels*)
      if objdump -dr "$object" | grep -E 'mem(move|cpy|set)'; then
        echo "$object calls the C library instead of looping" >&2
        exit 1
      fi
      objdump -d -C "$object" | grep -q 'StreamCopy' || exit 2
      echo "stream kernels: loops, no memmove/memcpy/memset calls"
      exit 0
      ;;
  esac
done
echo "no stream_kernels object among the arguments" >&2
exit 3
