# The report page's embedded files: assets.c pulls them in with .incbin,
# which the compiler's dependency files do not see.
$(OUT)/obj/user/report/assets.o: third_party/uplot/uPlot.iife.min.js \
	third_party/uplot/uPlot.min.css user/report/report.js user/report/report.css
