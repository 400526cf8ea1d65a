/* exit.h: the version, and the exit statuses every command shares (cmon
 * and cmon-agent). */
#ifndef CMON_CORE_EXIT_H
#define CMON_CORE_EXIT_H

#define CMON_VERSION "0.2.0"

enum cmon_exit {
	CMON_EXIT_OK = 0,
	CMON_EXIT_ERROR = 1, /* bad input, attach failure, runtime error */
	CMON_EXIT_USAGE = 2, /* bad command line */
	CMON_EXIT_LOST = 3,  /* the trace completed but events were lost */
};

#endif
