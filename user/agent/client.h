/*
 * client.h: `cmon agent --status`: ask a running agent for /status (over
 * HTTP with libcurl, loopback by default) and print it as a table.
 */
#ifndef CMON_AGENT_CLIENT_H
#define CMON_AGENT_CLIENT_H

#include <stddef.h>
#include <stdio.h>

/* Fetch http://LISTEN/status and print it to OUT.  0, or -errno after one
 * error line (-ECONNREFUSED: no agent there). */
int agent_client__status(const char *listen, FILE *out);

/* Print the /status document JSON (LEN bytes) to OUT as a table.  0 or
 * -EINVAL (not a status document). */
int agent_client__print_status(const char *json, size_t len, FILE *out);

#endif
