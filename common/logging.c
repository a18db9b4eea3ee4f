#include "logging.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>

int sf_log_level = SF_LOG_INFO;
static int use_syslog;

static const char *level_names[] = {"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"};

int sf_log_level_parse(const char *name) {
    int i;
    for (i = SF_LOG_ERR; i <= SF_LOG_DEBUG; i++)
        if (!strcmp(name, level_names[i]))
            return i;
    return -1;
}

void sf_log_use_syslog(int on, const char *ident) {
    if (on && !use_syslog)
        openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
    else if (!on && use_syslog)
        closelog();
    use_syslog = on;
}

void sf_log_reopen(void) {
}

void sf_log_write(int level, const char *fac, const char *fmt, ...) {
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (level < 0 || level > SF_LOG_DEBUG)
        level = SF_LOG_ERR;
    if (use_syslog) {
        syslog(level, "%s %s", fac, msg);
    } else {
        char ts[32];
        struct timeval tv;
        struct tm tm;
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
        /* One fprintf per line so lines from different threads do not interleave. */
        fprintf(stderr, "%s.%03d %s %s %s\n", ts, (int)(tv.tv_usec / 1000), level_names[level], fac,
                msg);
    }
}
