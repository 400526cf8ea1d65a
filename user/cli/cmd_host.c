// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_host.c: `cmon host [--json]`: what this host can do for cmon
 * (probe/host.h) and what its probes cost here (probe/calib.h), for a
 * user filing a bug and for the tests, which skip what the host lacks.
 */
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "cli/commands.h"
#include "cli/options.h"
#include "core/log.h"
#include "core/optable.h"
#include "probe/calib.h"
#include "probe/host.h"
#include "probe/insn.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cmon host [--json]\n\n"
		   "What this host's kernel and CPU can do for cmon, each found out by trying,\n"
		   "and what a probe costs here (measured now).  Attach it to a bug report.\n\n");
	cmon_opts__usage(OC_HOST, f);
}

static json_t *costs_json(const struct probe_calib *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "measured", json_boolean(c->valid));
	for (int k = 0; c->valid && k < CMON_CALIB_CLASSES; k++) {
		char key[48];

		snprintf(key, sizeof(key), "entry_%s_ns", probe_cost__name((enum probe_cost)k));
		json_object_set_new(o, key, json_integer((json_int_t)c->call_ns[k]));
	}
	if (c->valid) {
		json_object_set_new(o, "uretprobe_ns", json_integer((json_int_t)c->ret_ns[0]));
		json_object_set_new(o, "ret_insn_ns", json_integer((json_int_t)c->ret_ns[1]));
	}
	return o;
}

static int print_json(const struct host_caps *h, const struct probe_calib *c)
{
	json_t *root = json_object(), *feats = json_object();
	int err;

	json_object_set_new(root, "kernel", json_string(h->release));
	json_object_set_new(root, "lockdown", json_string(h->lockdown));
	for (int f = 0; f < HOST_NFEATURES; f++) {
		json_t *o = json_object();

		json_object_set_new(o, "have", json_boolean(h->have[f]));
		json_object_set_new(o, "why", json_string(h->why[f]));
		json_object_set_new(o, "serves", json_string(host__serves((enum host_feature)f)));
		json_object_set_new(o, "without", json_string(host__without((enum host_feature)f)));
		json_object_set_new(feats, host__name((enum host_feature)f), o);
	}
	json_object_set_new(root, "features", feats);
	json_object_set_new(root, "probe_costs", costs_json(c));
	err = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	printf("\n");
	return err ? CMON_EXIT_ERROR : CMON_EXIT_OK;
}

static void print_text(const struct host_caps *h, const struct probe_calib *c)
{
	printf("kernel %s, lockdown %s\n\n", h->release, h->lockdown);
	for (int f = 0; f < HOST_NFEATURES; f++) {
		enum host_feature e = (enum host_feature)f;

		if (h->have[f])
			printf("  yes  %-19s %s\n", host__name(e), host__serves(e));
		else
			printf("  no   %-19s %s\n       %-19s without it: %s\n", host__name(e),
			       h->why[f], "", host__without(e));
	}
	printf("\nprobe costs (measured now, ns a call):");
	if (!c->valid) {
		printf(" not measurable here\n");
		return;
	}
	for (int k = 0; k < CMON_CALIB_CLASSES; k++)
		printf(" entry %s %llu,", probe_cost__name((enum probe_cost)k),
		       (unsigned long long)c->call_ns[k]);
	printf(" uretprobe %llu, ret insn %llu\n", (unsigned long long)c->ret_ns[0],
	       (unsigned long long)c->ret_ns[1]);
}

int cmd_host(int argc, char **argv)
{
	const struct host_caps *h;
	const struct probe_calib *c;
	struct optable t;
	const char *optarg;
	bool json = false;
	int opt;

	if (cmon_opts__begin(&t, OC_HOST, "host", false))
		return CMON_EXIT_ERROR;
	while ((opt = optable__next(&t, argc, argv, &optarg)) != -1) {
		switch (opt) {
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			usage(stdout);
			return CMON_EXIT_OK;
		default: /* -2: said */
			return CMON_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		log_error("host: unexpected argument '%s'", argv[optind]);
		return CMON_EXIT_USAGE;
	}
	h = host__caps();
	c = probe_calib__host();
	if (json)
		return print_json(h, c);
	print_text(h, c);
	return CMON_EXIT_OK;
}
