/*
 * bpf_setup.h: what setting up a BPF program set has in common, whichever
 * skeleton it is (event/tracer, agg/profiler): the CPU count the per-CPU
 * maps are read with, and the one line that says why it failed.
 */
#ifndef CMON_BPF_SETUP_H
#define CMON_BPF_SETUP_H

#include <stdbool.h>

/* The possible CPUs (what per-CPU map values hold), at most CMON_MAX_CPUS:
 * > 0, or a negative errno. */
int bpf_setup__ncpus(void);

/* Log why the set could not be made: LOADING when the kernel or its
 * verifier refused the programs ("cannot load the BPF programs"), else
 * what was being done.  ERR is a negative errno. */
void bpf_setup__failed(bool loading, int err);

#endif
