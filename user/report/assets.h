/* assets.h: files embedded in the binary for the report page (assets.c). */
#ifndef CMON_REPORT_ASSETS_H
#define CMON_REPORT_ASSETS_H

extern const char report_asset_uplot_js[];  /* uPlot 1.6.32, MIT (third_party/uplot) */
extern const char report_asset_uplot_css[];
extern const char report_asset_js[];        /* user/report/report.js */
extern const char report_asset_css[];       /* user/report/report.css */

#endif
