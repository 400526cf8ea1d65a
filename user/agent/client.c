// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * client.c: `cmon agent --status`.  libcurl speaks HTTP (no hand-written
 * client to get wrong); the JSON answer is read with libyaml, which the
 * spec parser already uses (JSON is YAML).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include <yaml.h>
#include "agent/client.h"
#include "agent/http.h"
#include "agent/metrics.h"
#include "agent/yaml_limits.h"
#include "core/log.h"

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct mbuf *b = ctx;

	if (b->len + size * nmemb > (16u << 20))
		return 0; /* not a status document */
	mbuf__append(b, ptr, size * nmemb);
	return b->err ? 0 : size * nmemb;
}

int agent_client__status(const char *listen, FILE *out)
{
	struct sockaddr_storage ss;
	struct mbuf body = {};
	char addr[80], url[128];
	socklen_t len;
	CURL *c = NULL;
	CURLcode rc;
	long code = 0;
	int err = 0;

	if (agent_http__parse_addr(listen, &ss, &len)) {
		log_error("--listen %s: not HOST:PORT", listen);
		return -EINVAL;
	}
	agent_http__format_addr((struct sockaddr *)&ss, addr, sizeof(addr));
	snprintf(url, sizeof(url), "http://%s/status", addr);
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -ENOMEM;
	c = curl_easy_init();
	if (!c) {
		err = -ENOMEM;
		goto cleanup;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*"); /* the agent is local: no http_proxy */
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		err = rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
		log_error("no agent at %s: %s", addr, curl_easy_strerror(rc));
		goto cleanup;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200) {
		err = -EIO;
		log_error("%s answered HTTP %ld", url, code);
		goto cleanup;
	}
	err = agent_client__print_status(body.buf ? body.buf : "", body.len, out);
	if (err)
		log_error("%s: not a cmon agent's status", url);
cleanup:
	curl_easy_cleanup(c);
	curl_global_cleanup();
	mbuf__release(&body);
	return err;
}

/* ---------------------------------------------------------------- printing */

static const char *scalar(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	/* JSON null: a plain "null". */
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    !strcmp((const char *)n->data.scalar.value, "null"))
		return NULL;
	return (const char *)n->data.scalar.value;
}

static yaml_node_t *get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(d, p->key));

		if (k && !strcmp(k, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static const char *str(yaml_document_t *d, yaml_node_t *map, const char *key, const char *dflt)
{
	const char *s = scalar(get(d, map, key));

	return s ? s : dflt;
}

/* "2024-05-01 12:00:03" (local time) from Unix seconds, or "-". */
static const char *when(const char *unix_s, char *buf, size_t len)
{
	struct tm tm;
	time_t t;

	if (!unix_s)
		return "-";
	t = (time_t)strtod(unix_s, NULL);
	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		return "-";
	return buf;
}

#define MAX_PIDS_SHOWN 20

/* "  files: A, B" and "  processes: 123 (app), 456 (app)" under a probe. */
static void print_files(yaml_document_t *d, yaml_node_t *probe, FILE *out)
{
	yaml_node_t *files = get(d, probe, "files"), *procs = get(d, probe, "processes");
	size_t n = 0;

	if (files && files->type == YAML_SEQUENCE_NODE &&
	    files->data.sequence.items.top > files->data.sequence.items.start) {
		fprintf(out, "  files:");
		for (yaml_node_item_t *it = files->data.sequence.items.start;
		     it < files->data.sequence.items.top; it++) {
			const char *f = scalar(yaml_document_get_node(d, *it));

			fprintf(out, "%s %s", it == files->data.sequence.items.start ? "" : ",",
				f ? f : "?");
		}
		fputc('\n', out);
	}
	if (!procs || procs->type != YAML_SEQUENCE_NODE || !files ||
	    files->data.sequence.items.top == files->data.sequence.items.start)
		return;
	fprintf(out, "  processes:");
	for (yaml_node_item_t *it = procs->data.sequence.items.start;
	     it < procs->data.sequence.items.top; it++, n++) {
		yaml_node_t *pr = yaml_document_get_node(d, *it);

		if (n < MAX_PIDS_SHOWN)
			fprintf(out, "%s %s (%s)", n ? "," : "", str(d, pr, "pid", "?"),
				str(d, pr, "comm", "?"));
	}
	if (!n)
		fprintf(out, " none now");
	else if (n > MAX_PIDS_SHOWN)
		fprintf(out, " and %zu more", n - MAX_PIDS_SHOWN);
	fputc('\n', out);
}

/* "  host programs: cmon_migrate 1,234 runs 0.52 ms, ..." under a probe:
 * the programs the host's events run (every exec, fork, migration). */
static void print_host_programs(yaml_document_t *d, yaml_node_t *probe, FILE *out)
{
	yaml_node_t *progs = get(d, probe, "host_programs");

	if (!progs || progs->type != YAML_SEQUENCE_NODE ||
	    progs->data.sequence.items.top == progs->data.sequence.items.start)
		return;
	fprintf(out, "  host programs:");
	for (yaml_node_item_t *it = progs->data.sequence.items.start;
	     it < progs->data.sequence.items.top; it++) {
		yaml_node_t *pr = yaml_document_get_node(d, *it);

		fprintf(out, "%s %s %s runs %.3f ms", it == progs->data.sequence.items.start ? "" : ",",
			str(d, pr, "name", "?"), str(d, pr, "runs", "?"),
			strtod(str(d, pr, "run_time_seconds", "0"), NULL) * 1e3);
	}
	fputc('\n', out);
}

/* A percentage of a share S ("0.01" -> "1.00%"), or "?". */
static const char *pct(const char *s, char *buf, size_t len)
{
	if (!s)
		return "?";
	snprintf(buf, len, "%.2f%%", strtod(s, NULL) * 100);
	return buf;
}

/* "budget 1.00% of one CPU, the probes cost 0.98% now" and each function
 * duty-cycled: "  cut paced/count_me: attached 4.10% of the time, ...". */
static void print_budget(yaml_document_t *d, yaml_node_t *agent, FILE *out)
{
	yaml_node_t *duty = get(d, agent, "duty");
	char b1[32], b2[32];

	if (!scalar(get(d, agent, "budget")))
		return;
	fprintf(out, "budget %s of one CPU, the probes cost %s now\n",
		pct(str(d, agent, "budget", NULL), b1, sizeof(b1)),
		pct(str(d, agent, "overhead", NULL), b2, sizeof(b2)));
	if (!duty || duty->type != YAML_SEQUENCE_NODE)
		return;
	for (yaml_node_item_t *it = duty->data.sequence.items.start; it < duty->data.sequence.items.top;
	     it++) {
		yaml_node_t *f = yaml_document_get_node(d, *it);

		if (strtod(str(d, f, "sampled", "1"), NULL) >= 1)
			continue; /* whole: every call counted */
		fprintf(out, "  duty-cycled %s/%s: attached %s of the time, costs %s, %s calls seen "
			     "(its counts are estimates)",
			str(d, f, "probe", "?"), str(d, f, "function", "?"),
			pct(str(d, f, "sampled", NULL), b1, sizeof(b1)),
			pct(str(d, f, "overhead", NULL), b2, sizeof(b2)), str(d, f, "seen", "?"));
		/* what a call costs: measured on its process, or the calibration */
		if (scalar(get(d, f, "measured_call_ns")))
			fprintf(out, "; a call costs %s ns measured, %s ns calibrated\n",
				str(d, f, "measured_call_ns", "?"), str(d, f, "call_ns", "?"));
		else
			fprintf(out, "; a call costs %s ns calibrated (not measured yet)\n",
				str(d, f, "call_ns", "?"));
	}
}

int agent_client__print_status(const char *json, size_t len, FILE *out)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root, *agent, *probes;
	char t1[32], t2[32];
	size_t line;
	int err;

	/* A status document nests 3 levels: anything deeper is not one (and
	 * would cost libyaml time in proportion to its depth per token). */
	err = yaml_limits__check_depth(json, len, YAML_MAX_DEPTH, &line);
	if (err)
		return err == -E2BIG ? -EINVAL : err;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)json, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	agent = get(&doc, root, "agent");
	probes = get(&doc, root, "probes");
	if (!agent || !probes || probes->type != YAML_SEQUENCE_NODE) {
		err = -EINVAL;
		goto cleanup;
	}
	fprintf(out, "agent %s (pid %s), spec %s, up since %s\n", str(&doc, agent, "listen", "?"),
		str(&doc, agent, "pid", "?"), str(&doc, agent, "spec", "?"),
		when(scalar(get(&doc, agent, "started_at")), t1, sizeof(t1)));
	fprintf(out, "spec reloads %s (failed %s), attach errors %s, capabilities %s\n",
		str(&doc, agent, "reloads", "?"), str(&doc, agent, "reload_errors", "?"),
		str(&doc, agent, "attach_errors", "?"), str(&doc, agent, "capabilities", "?"));
	if (scalar(get(&doc, agent, "last_reload_error")))
		fprintf(out, "last reload failed: %s\n", str(&doc, agent, "last_reload_error", ""));
	print_budget(&doc, agent, out);
	fprintf(out, "\n%-24s %-8s %5s %12s %8s  %-19s  %s\n", "PROBE", "STATE", "FUNCS", "HITS",
		"LOST", "ATTACHED", "NOTE");
	for (yaml_node_item_t *it = probes->data.sequence.items.start;
	     it < probes->data.sequence.items.top; it++) {
		yaml_node_t *p = yaml_document_get_node(&doc, *it);
		const char *state = str(&doc, p, "state", "?");
		const char *note = "";
		char buf[64];

		if (!strcmp(state, "error")) {
			note = str(&doc, p, "error", "");
		} else if (!strcmp(state, "expired")) {
			snprintf(buf, sizeof(buf), "expired %s",
				 when(scalar(get(&doc, p, "expired_at")), t2, sizeof(t2)));
			note = buf;
		} else if (scalar(get(&doc, p, "expires_at"))) {
			snprintf(buf, sizeof(buf), "expires %s",
				 when(scalar(get(&doc, p, "expires_at")), t2, sizeof(t2)));
			note = buf;
		}
		fprintf(out, "%-24s %-8s %5s %12s %8s  %-19s  %s\n", str(&doc, p, "name", "?"), state,
			str(&doc, p, "functions", "0"), str(&doc, p, "hits", "0"),
			str(&doc, p, "lost", "0"),
			when(scalar(get(&doc, p, "attached_at")), t1, sizeof(t1)), note);
		print_files(&doc, p, out);
		print_host_programs(&doc, p, out);
	}
	if (probes->data.sequence.items.top == probes->data.sequence.items.start)
		fprintf(out, "(no probes)\n");
cleanup:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return err;
}
