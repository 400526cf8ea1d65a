// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cmon_abi.h"
#include "core/log.h"
#include "bpf_setup.h"

int bpf_setup__ncpus(void)
{
	int n = libbpf_num_possible_cpus();

	if (n <= 0)
		return n ? n : -EINVAL;
	return n > CMON_MAX_CPUS ? -E2BIG : n;
}

void bpf_setup__failed(bool loading, int err)
{
	if (loading)
		log_error("cannot load the BPF programs: %s", strerror(-err));
	else if (err == -E2BIG)
		log_error("more than %d CPUs: not supported", CMON_MAX_CPUS);
	else
		log_error("cannot set the BPF programs up: %s", strerror(-err));
}
