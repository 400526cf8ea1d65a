// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_spec: the agent's spec parser (agent/spec.c, libyaml underneath,
 * YAML or JSON) on any bytes: a spec, or one error message; every probe of
 * a spec either valid or carrying its error line.  `make fuzz` runs it
 * under libFuzzer; tests/unit/test_fuzz_corpus.c replays the kept corpus
 * (tests/fuzz/corpus/spec) in `make test`.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "agent/spec.h"
#include "core/log.h"

static void fuzz_spec_quiet(void *ctx, enum log_level level, const char *text)
{
	(void)ctx;
	(void)level;
	(void)text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_spec *s = NULL;
	char *msg = NULL;
	int err;

	log_set_sink(fuzz_spec_quiet, NULL);
	err = agent_spec__parse((const char *)data, size, &s, &msg);
	if (err ? (s != NULL || (err != -ENOMEM && (!msg || strchr(msg, '\n')))) : !s)
		abort();
	for (size_t i = 0; s && i < s->n_probes; i++) {
		const struct probe_spec *p = &s->probes[i];

		if (!p->id || (p->error && strchr(p->error, '\n')))
			abort();
		if (!p->error && (p->max_functions < 1 || p->max_functions > SPEC_MAX_FUNCTIONS))
			abort();
	}
	agent_spec__free(s);
	free(msg);
	log_set_sink(NULL, NULL);
	return 0;
}
