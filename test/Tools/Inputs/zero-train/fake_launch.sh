#!/bin/sh
# fake_launch.sh N LAUNCH-ID ARGS...: starts N zero-train processes at once
# with the environment Open MPI gives its ranks (OMPI_COMM_WORLD_SIZE/RANK,
# PMIX_NAMESPACE = LAUNCH-ID), as `mpirun -np N zero-train ARGS` would,
# without MPI; writes rank R's output to rank.R and prints "rank R: exit S"
# for each rank in order.
n=$1 id=$2
shift 2
r=0
while [ "$r" -lt "$n" ]; do
  OMPI_COMM_WORLD_SIZE=$n OMPI_COMM_WORLD_RANK=$r PMIX_NAMESPACE=$id \
    zero-train "$@" > rank.$r 2>&1 &
  eval "pid$r=\$!"
  r=$((r + 1))
done
r=0
while [ "$r" -lt "$n" ]; do
  eval "wait \$pid$r"
  echo "rank $r: exit $?"
  r=$((r + 1))
done
