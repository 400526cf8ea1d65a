// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * html.c: the report page.  One file: the data as JSON in a script element
 * ('/' escaped, so no "</script>" can end it early), uPlot, the page's
 * script and style inline.  A Content-Security-Policy forbids every fetch,
 * so the page works, and stays, offline.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "assets.h"
#include "core/strbuf.h"
#include "output/writer.h"
#include "report.h"

/* TITLE as HTML text. */
static void put_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

int report__write_html(FILE *out, const char *title, json_t *data)
{
	char *json;

	json_object_set_new(data, "title", json_string(title));
	json = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_ENSURE_ASCII);
	if (!json)
		return -ENOMEM;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"generator\" content=\"cmon report\">\n<title>", out);
	put_text(out, title);
	fputs("</title>\n<style>\n", out);
	fputs(report_asset_uplot_css, out);
	fputs("\n", out);
	fputs(report_asset_css, out);
	fputs("</style>\n</head>\n<body>\n<div id=\"content\"></div>\n"
	      "<script type=\"application/json\" id=\"cmon-data\">", out);
	fputs(json, out);
	fputs("</script>\n<script>\n", out);
	fputs(report_asset_uplot_js, out);
	fputs("\n</script>\n<script>\n", out);
	fputs(report_asset_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
	free(json);
	return ferror(out) ? -EIO : 0;
}
