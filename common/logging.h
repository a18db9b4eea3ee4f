/* Logging to stderr (the journal under systemd) or syslog. */
#ifndef SF_LOGGING_H
#define SF_LOGGING_H

enum { SF_LOG_ERR = 3, SF_LOG_WARNING = 4, SF_LOG_NOTICE = 5, SF_LOG_INFO = 6, SF_LOG_DEBUG = 7 };

extern int sf_log_level;

/* Log a line "LEVEL FACILITY message" at @level; arguments are not evaluated when the level is
 * filtered out. FACILITY is a short upper-case tag ("ZK", "STORAGE", "PROTOERR"). */
#define sf_log(level, fac, ...)                                                                    \
    do {                                                                                           \
        if ((level) <= sf_log_level)                                                               \
            sf_log_write((level), (fac), __VA_ARGS__);                                             \
    } while (0)

void sf_log_write(int level, const char *fac, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parse a level name (error, warning, notice, info, debug); -1 if unknown. */
int sf_log_level_parse(const char *name);

/* Send log lines to syslog (1) or stderr (0, the default). */
void sf_log_use_syslog(int on, const char *ident);

/* Reopen the log destination (SIGHUP); a no-op for stderr and syslog. */
void sf_log_reopen(void);

#endif
