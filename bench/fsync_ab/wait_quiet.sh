#!/usr/bin/env bash
# wait_quiet.sh [MAX_SECONDS]: returns once the CPUs were <8% busy over 3
# consecutive 3-second samples (exit 1 at MAX_SECONDS).
max=${1:-600}; end=$((SECONDS + max)); q=0
busy() { read -r _ a b c d e f g _ < /proc/stat; t1=$((a+b+c+e+f+g)); i1=$d; sleep 3; read -r _ a b c d e f g _ < /proc/stat; t2=$((a+b+c+e+f+g)); i2=$d; echo $(( 100*(t2-t1)/((t2-t1)+(i2-i1)+1) )); }
while ((SECONDS < end)); do
  b=$(busy); if ((b < 8)); then q=$((q+1)); else q=0; fi
  ((q >= 3)) && { echo "# quiet at $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0; }
done
echo "# not quiet by $(date +%T)"; exit 1
