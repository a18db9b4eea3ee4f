/* streamflowd: the StreamFlow broker daemon. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#ifdef HAVE_MALLOC_H
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>
#include <openssl/ssl.h>

#include "broker.h"
#include "brokercfg.h"
#include "err.h"
#include "logging.h"
#include "tls.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

static void usage(FILE *fp) {
    fprintf(fp,
            "Usage: streamflowd -c FILE\n"
            "       streamflowd --check-config -c FILE\n"
            "\n"
            "StreamFlow broker: speaks the Apache Kafka protocol, keeps cluster metadata in\n"
            "ZooKeeper and partition data in its log directories.\n"
            "\n"
            "Options:\n"
            "  -c, --config FILE   configuration file (Kafka server.properties syntax),\n"
            "                      e.g. " SYSCONFDIR "/streamflow/streamflowd.conf\n"
            "      --check-config  load and validate the configuration (including the TLS\n"
            "                      certificates), print \"configuration OK\" and exit\n"
            "  -V, --version       print the version and exit\n"
            "  -h, --help          print this help and exit\n"
            "\n"
            "Signals: SIGTERM/SIGINT controlled shutdown, SIGHUP reopen logs and reload.\n"
            "\n"
            "Configuration keys [default]:\n");
    sf_brokercfg_print_keys(fp);
}

/* --check-config validates, beyond the file itself and without connecting anywhere, the log
 * directories and the TLS material of SSL listeners. */
static int check_tls(const sf_brokercfg_t *cfg, char *errstr, size_t errstr_size) {
    size_t i;
    for (i = 0; i < cfg->nlisteners; i++) {
        if (cfg->listeners[i].security == SF_BROKERCFG_SSL) {
            char tlserr[512];
            SSL_CTX *ctx = sf_tls_server_ctx_new(cfg->ssl_keystore_location, cfg->ssl_key_password,
                                                 cfg->ssl_truststore_location, cfg->ssl_client_auth,
                                                 tlserr, sizeof(tlserr));
            if (!ctx) {
                snprintf(errstr, errstr_size, "%s: ssl.keystore.location: %s", cfg->path, tlserr);
                return SF_ERR_INVALID;
            }
            SSL_CTX_free(ctx);
            return SF_OK;
        }
    }
    return SF_OK;
}

/* Each log directory must exist and be writable, or be creatable in an existing parent (the
 * broker creates it at start). */
static int check_log_dirs(const sf_brokercfg_t *cfg, char *errstr, size_t errstr_size) {
    size_t i;
    for (i = 0; i < cfg->nlog_dirs; i++) {
        const char *dir = cfg->log_dirs[i];
        char parent[512];
        struct stat st;
        char *slash;
        if (stat(dir, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(errstr, errstr_size, "%s: log.dirs: %s is not a directory", cfg->path, dir);
                return SF_ERR_INVALID;
            }
            if (access(dir, W_OK | X_OK) != 0) {
                snprintf(errstr, errstr_size, "%s: log.dirs: %s is not writable: %s", cfg->path,
                         dir, strerror(errno));
                return SF_ERR_INVALID;
            }
            continue;
        }
        snprintf(parent, sizeof(parent), "%s", dir);
        slash = strrchr(parent, '/');
        if (slash == parent)
            slash[1] = '\0';
        else if (slash)
            *slash = '\0';
        else
            snprintf(parent, sizeof(parent), ".");
        if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode) || access(parent, W_OK | X_OK) != 0) {
            snprintf(errstr, errstr_size,
                     "%s: log.dirs: %s does not exist and cannot be created (%s is missing or not "
                     "writable)",
                     cfg->path, dir, parent);
            return SF_ERR_INVALID;
        }
    }
    return SF_OK;
}

static void on_shutdown_signal(evutil_socket_t sig, short what, void *arg) {
    sf_broker_t *broker = arg;
    (void)what;
    sf_log(SF_LOG_NOTICE, "MAIN", "%s received: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
    sf_broker_shutdown(broker);
}

static void on_hup_signal(evutil_socket_t sig, short what, void *arg) {
    sf_broker_t *broker = arg;
    (void)sig;
    (void)what;
    sf_log(SF_LOG_NOTICE, "MAIN", "SIGHUP received: reopening logs and reloading");
    sf_log_reopen();
    sf_broker_reload(broker);
}

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"check-config", no_argument, NULL, 'C'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL;
    int check_only = 0, opt, code, i;
    char errstr[1024];
    sf_brokercfg_t *cfg = NULL;
    struct event_base *base = NULL;
    sf_broker_t *broker = NULL;
    struct event *sigs[3] = {NULL, NULL, NULL};

    while ((opt = getopt_long(argc, argv, "c:Vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            config = optarg;
            break;
        case 'C':
            check_only = 1;
            break;
        case 'V':
            printf("streamflowd %s\n", PACKAGE_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "Try 'streamflowd --help' for more information.\n");
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "streamflowd: unexpected argument \"%s\"\n"
                        "Try 'streamflowd --help' for more information.\n", argv[optind]);
        return 2;
    }
    if (!config) {
        fprintf(stderr, "streamflowd: no configuration file given (use -c FILE)\n"
                        "Try 'streamflowd --help' for more information.\n");
        return 2;
    }

    if (sf_brokercfg_load(config, &cfg, errstr, sizeof(errstr)) != SF_OK) {
        fprintf(stderr, "streamflowd: %s\n", errstr);
        return 1;
    }
    if (check_only) {
        int rc = check_log_dirs(cfg, errstr, sizeof(errstr));
        if (rc == SF_OK)
            rc = check_tls(cfg, errstr, sizeof(errstr));
        sf_brokercfg_free(cfg);
        if (rc != SF_OK) {
            fprintf(stderr, "streamflowd: %s\n", errstr);
            return 1;
        }
        printf("configuration OK\n");
        return 0;
    }

    sf_log_level = cfg->log_level;
    sf_log_use_syslog(cfg->syslog, "streamflowd");
    for (i = 0; i < (int)cfg->nignored_keys; i++)
        sf_log(SF_LOG_NOTICE, "MAIN", "%s: %s is a Kafka setting StreamFlow does not use; ignored",
               cfg->path, cfg->ignored_keys[i]);
    /* A peer that closes early must give EPIPE on write, not kill the process. */
    signal(SIGPIPE, SIG_IGN);
#if defined(HAVE_MALLOC_H) && defined(M_TRIM_THRESHOLD) && defined(M_MMAP_THRESHOLD)
    /* Request frames (up to a megabyte or more each) are allocated by the network threads and
     * freed in bursts once their appends are done. With glibc's adaptive thresholds each such
     * burst hands the memory back to the kernel (munmap, or madvise on a thread's heap) and
     * the next frames fault it in again, page by page, in the middle of receiving: keep it. */
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif

    code = 1;
    /* ZooKeeper completions and the flusher run on other threads and wake the loop. */
    if (evthread_use_pthreads() != 0) {
        fprintf(stderr, "streamflowd: libevent has no pthreads support\n");
        goto out;
    }
    base = event_base_new();
    if (!base) {
        fprintf(stderr, "streamflowd: cannot create the event loop\n");
        goto out;
    }
    if (sf_broker_new(base, cfg, &broker, errstr, sizeof(errstr)) != SF_OK) {
        fprintf(stderr, "streamflowd: %s\n", errstr);
        goto out;
    }
    sigs[0] = evsignal_new(base, SIGTERM, on_shutdown_signal, broker);
    sigs[1] = evsignal_new(base, SIGINT, on_shutdown_signal, broker);
    sigs[2] = evsignal_new(base, SIGHUP, on_hup_signal, broker);
    for (i = 0; i < 3; i++) {
        if (!sigs[i] || evsignal_add(sigs[i], NULL) < 0) {
            fprintf(stderr, "streamflowd: cannot install signal handlers\n");
            goto out;
        }
    }
    sf_log(SF_LOG_NOTICE, "MAIN", "streamflowd %s started (broker.id %d, %s)", PACKAGE_VERSION,
           (int)cfg->broker_id, cfg->path);
    event_base_dispatch(base);
    code = sf_broker_exit_code(broker);
    sf_log(SF_LOG_NOTICE, "MAIN", "streamflowd stopped (exit code %d)", code);

out:
    for (i = 0; i < 3; i++)
        if (sigs[i])
            event_free(sigs[i]);
    sf_broker_free(broker);
    if (base)
        event_base_free(base);
    sf_brokercfg_free(cfg);
    libevent_global_shutdown();
    return code;
}
