// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * assets.c: the files the report page embeds, built into the binary
 * (.incbin, paths from the repository root where make runs; report.mk
 * makes this object depend on them): uPlot (third_party/uplot, MIT), and
 * the page's own script and style.  Each is NUL-terminated.
 */
#include "assets.h"

#define ASSET(sym, path)                                  \
	__asm__(".section .rodata\n"                      \
		".global " #sym "\n"                      \
		".type " #sym ", @object\n"               \
		#sym ":\n"                                \
		".incbin \"" path "\"\n"                  \
		".byte 0\n"                               \
		".size " #sym ", . - " #sym "\n"          \
		".previous\n")

ASSET(report_asset_uplot_js, "third_party/uplot/uPlot.iife.min.js");
ASSET(report_asset_uplot_css, "third_party/uplot/uPlot.min.css");
ASSET(report_asset_js, "user/report/report.js");
ASSET(report_asset_css, "user/report/report.css");
