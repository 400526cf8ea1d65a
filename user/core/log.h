/* log.h: diagnostics to stderr, one verbosity switch for cmon and libbpf. */
#ifndef CMON_LOG_H
#define CMON_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Messages above this level are dropped; default LOG_WARN. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Prefix every message with "cmon: " and end it with a newline. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A line of a command's report ("cmon: " and the text): shown whatever the
 * verbosity (the command's --quiet decides whether to make it); to the
 * thread's sink, when one is installed, as LOG_INFO. */
void log_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Where the calling thread's messages go: FN(CTX, level, text without
 * "cmon: " or a newline) instead of stderr, until log_set_sink(NULL, NULL).
 * Per thread: modules report through log_* and the caller decides how a
 * message is shown (the agent keeps a probe's error with its state).
 * Messages above the level are dropped first; libbpf's come as LOG_INFO
 * and LOG_DEBUG prefixed "libbpf: ".
 */
typedef void (*log_sink_fn)(void *ctx, enum log_level level, const char *text);
void log_set_sink(log_sink_fn fn, void *ctx);

/* Route libbpf's own messages through log_msg (warnings at -v, debug at -vv). */
void log_route_libbpf(void);

#endif
