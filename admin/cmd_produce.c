/* streamflow produce: one record per line of standard input. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clidata.h"

static const char produce_usage[] =
    "Usage: streamflow produce TOPIC [OPTIONS] < LINES\n"
    "\n"
    "Send each line of standard input as one record (the newline is not part of it; lines\n"
    "may be of any length and hold any byte but newline; an empty line is an empty value).\n"
    "At the end of the input, wait until every record has its outcome. Prints nothing on\n"
    "success; exits 1 when a record was not delivered, naming the first failure.\n"
    "\n"
    "Options:\n"
    "  --partition N          send every record to partition N (default: the partitioner\n"
    "                         chooses, by key hash for keyed records)\n"
    "  --key-separator SEP    split each line at the first SEP into key and value; a line\n"
    "                         without SEP stops the command (exit 1, naming the line) after\n"
    "                         the lines before it are delivered. \\t in SEP means a tab\n"
    "  --header KEY=VALUE     add this header to every record (repeatable)\n"
    "  --acks 0|1|all         acknowledgements to wait for (default all: then the producer\n"
    "                         is idempotent, a retried batch is stored once)\n"
    "  --compression CODEC    none, gzip, snappy, lz4 or zstd (default none)\n"
    "  --linger-ms N          wait up to N ms to fill a batch (default 5)\n"
    "  --batch-size BYTES     batch size per partition (default 16384)\n"
    "  --report-file FILE     write one line per acknowledged record to FILE:\n"
    "                         LINE<TAB>PARTITION<TAB>OFFSET (LINE counts input lines from 1)\n"
    "  --transactional-id ID  write in transactions of that transactional.id, each of up to\n"
    "                         --transaction-size records (default 1000) and the rest at the\n"
    "                         end of the input: read_committed consumers see a transaction's\n"
    "                         records together once it commits; one that fails is aborted\n"
    "                         (exit 1), as is the open one when a line cannot be sent. A\n"
    "                         second producer with the same id fences this one\n"
    "  --transaction-size N   records per transaction\n"
    "  -v, --verbose          print \"N records produced\" to standard error at the end\n"
    "\n"
    "A send waits up to --timeout ms for the topic's metadata or for buffer room (unless\n"
    "max.block.ms is configured). Records are retried until delivery.timeout.ms (120000).\n"
    "\n"
    "SIGINT or SIGTERM stops reading; the records read so far are still delivered (a second\n"
    "signal abandons them). Other producer settings: -X KEY=VALUE with Kafka's names (e.g.\n"
    "-X delivery.timeout.ms=30000).\n";

enum {
    OPT_PARTITION = 0x200,
    OPT_KEYSEP,
    OPT_HEADER,
    OPT_ACKS,
    OPT_COMPRESSION,
    OPT_LINGER,
    OPT_BATCH,
    OPT_REPORT,
    OPT_TXN_ID,
    OPT_TXN_SIZE
};

/* Delivery outcomes, updated by the callback (which runs in this thread, from poll/flush). */
static struct {
    long long acked;
    long long failed;
    int first_err;
    long long first_err_line;
    FILE *report;
    int report_err; /* errno of a failed write to the report file */
} produce_st;

static volatile sig_atomic_t produce_interrupted;
static pthread_t produce_main_thread;

static void produce_on_signal(int sig) {
    /* Only the reading thread's read(2) must be interrupted: forward the signal there when
     * another thread (the library's) received it. */
    if (!pthread_equal(pthread_self(), produce_main_thread)) {
        pthread_kill(produce_main_thread, sig);
        return;
    }
    produce_interrupted++;
}

static void produce_on_delivery(const sf_delivery_t *d, void *opaque) {
    long long line = (long long)(intptr_t)opaque;

    if (d->err) {
        if (produce_st.failed++ == 0) {
            produce_st.first_err = d->err;
            produce_st.first_err_line = line;
        }
        return;
    }
    produce_st.acked++;
    if (produce_st.report &&
        fprintf(produce_st.report, "%lld\t%d\t%lld\n", line, (int)d->partition,
                (long long)d->offset) < 0 && !produce_st.report_err)
        produce_st.report_err = errno ? errno : EIO;
}

/* --transactional-id: abort the open transaction. Returns SF_OK or the error (printed). */
static int abort_txn(sf_producer_t *p, const sf_cli_t *cli) {
    int err = sf_producer_abort_transaction(p, cli->timeout_ms);
    if (err)
        sf_cli_fail(cli, "aborting the transaction", err);
    return err;
}

/* Commit the open transaction; one that cannot commit is aborted. Returns SF_OK or the
 * commit's error (printed). */
static int txn_end(sf_producer_t *p, const sf_cli_t *cli) {
    int err = sf_producer_commit_transaction(p, cli->timeout_ms);
    if (err) {
        sf_cli_fail(cli, "committing a transaction (aborted)", err);
        abort_txn(p, cli);
    }
    return err;
}

int sf_cmd_produce(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"key-separator", required_argument, NULL, OPT_KEYSEP},
        {"header", required_argument, NULL, OPT_HEADER},
        {"acks", required_argument, NULL, OPT_ACKS},
        {"compression", required_argument, NULL, OPT_COMPRESSION},
        {"linger-ms", required_argument, NULL, OPT_LINGER},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"report-file", required_argument, NULL, OPT_REPORT},
        {"transactional-id", required_argument, NULL, OPT_TXN_ID},
        {"transaction-size", required_argument, NULL, OPT_TXN_SIZE},
        {"verbose", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0}};
    sf_clidata_headers_t headers = {0};
    sf_clidata_prodopts_t po = {0};
    const char *topic, *report_path = NULL;
    char *keysep = NULL, *line = NULL;
    const char *keysep_arg = NULL;
    size_t keysep_len = 0, cap = 0;
    long long partition = SF_PARTITION_ANY, lineno = 0, sent = 0, txn_size = 1000, in_txn = 0;
    const char *txn_id = NULL;
    int verbose = 0, rc = SF_CLI_EXIT_USAGE, c, stop_err = 0;
    long long stop_line = 0;
    size_t stop_size = 0;
    enum { STOP_EOF, STOP_READ, STOP_NOSEP, STOP_SEND, STOP_TXN } stop = STOP_EOF;
    sf_conf_t *conf = NULL;
    sf_producer_t *p = NULL;
    char errstr[512];
    struct sigaction sa, old_int, old_term;
    sigset_t sigs, old_mask;

    optind = 0;
    while ((c = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS "v", longopts)) != -1) {
        switch (c) {
        case 'h':
            fputs(produce_usage, stdout);
            sf_cli_print_common_options(stdout);
            rc = SF_CLI_EXIT_OK;
            goto out;
        case OPT_PARTITION:
            if (sf_cli_parse_int(cli, "--partition", optarg, 0, INT32_MAX, &partition) < 0)
                goto out;
            break;
        case OPT_KEYSEP:
            free(keysep);
            keysep = malloc(strlen(optarg) + 1);
            keysep_arg = optarg;
            if (!keysep) {
                sf_cli_error(cli, "out of memory");
                goto out;
            }
            keysep_len = sf_clidata_unescape(optarg, keysep, strlen(optarg) + 1);
            if (keysep_len == 0) {
                sf_cli_error(cli, "--key-separator must not be empty");
                goto out;
            }
            break;
        case OPT_HEADER:
            if (sf_clidata_headers_add(cli, &headers, optarg) < 0)
                goto out;
            break;
        case OPT_ACKS: po.acks = optarg; break;
        case OPT_COMPRESSION: po.compression = optarg; break;
        case OPT_LINGER: po.linger_ms = optarg; break;
        case OPT_BATCH: po.batch_size = optarg; break;
        case OPT_REPORT: report_path = optarg; break;
        case OPT_TXN_ID: txn_id = optarg; break;
        case OPT_TXN_SIZE:
            if (sf_cli_parse_int(cli, "--transaction-size", optarg, 1, INT32_MAX, &txn_size) < 0)
                goto out;
            break;
        case 'v': verbose = 1; break;
        default:
            goto out;
        }
    }
    if (!(topic = sf_clidata_topic_arg(cli, argc, argv)))
        goto out;

    if (!(conf = sf_cli_conf(cli)))
        goto out;
    if (sf_clidata_prodopts_apply(cli, conf, &po) < 0 || sf_clidata_conf_block(cli, conf) < 0 ||
        (txn_id && sf_clidata_conf_set(cli, conf, "--transactional-id", "transactional.id",
                                       txn_id) < 0))
        goto out;
    memset(&produce_st, 0, sizeof(produce_st));
    if (report_path) {
        produce_st.report = fopen(report_path, "w");
        if (!produce_st.report) {
            sf_cli_error(cli, "--report-file %s: %s", report_path, strerror(errno));
            rc = SF_CLI_EXIT_FAIL;
            goto out;
        }
        setvbuf(produce_st.report, NULL, _IOLBF, 0);
    }

    /* SIGINT/SIGTERM end the input (read(2) fails with EINTR: no SA_RESTART). The library's
     * threads are started with both blocked so that they go to this thread. */
    produce_interrupted = 0;
    produce_main_thread = pthread_self();
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = produce_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, &old_mask);
    errstr[0] = '\0';
    p = sf_producer_new(conf, errstr, sizeof(errstr));
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    if (!p) {
        sf_cli_error(cli, "cannot create a producer: %s", errstr[0] ? errstr : "unknown error");
        rc = SF_CLI_EXIT_USAGE;
        goto restore;
    }
    if (txn_id && (stop_err = sf_producer_init_transactions(p, cli->timeout_ms)) != SF_OK) {
        rc = sf_cli_fail(cli, "initialising the transactions", stop_err);
        goto restore;
    }

    while (!produce_interrupted) {
        ssize_t len;
        sf_record_t rec;
        int err;

        errno = 0;
        len = getline(&line, &cap, stdin);
        if (len < 0) {
            if (ferror(stdin) && errno != EINTR && !produce_interrupted) {
                sf_cli_error(cli, "reading standard input: %s", strerror(errno));
                stop = STOP_READ;
            }
            break;
        }
        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        memset(&rec, 0, sizeof(rec));
        rec.topic = topic;
        rec.partition = (int32_t)partition;
        rec.headers = headers.v;
        rec.header_count = headers.n;
        rec.value = line;
        rec.value_len = (size_t)len;
        if (keysep) {
            const char *s = memmem(line, (size_t)len, keysep, keysep_len);
            if (!s) {
                stop = STOP_NOSEP;
                stop_line = lineno;
                break;
            }
            rec.key = line;
            rec.key_len = (size_t)(s - line);
            rec.value = s + keysep_len;
            rec.value_len = (size_t)len - rec.key_len - keysep_len;
        }
        if (txn_id && !in_txn && (err = sf_producer_begin_transaction(p)) != SF_OK) {
            stop = STOP_TXN;
            stop_err = err;
            break;
        }
        in_txn += txn_id != NULL;
        err = sf_producer_send(p, &rec, produce_on_delivery, (void *)(intptr_t)lineno);
        if (err) {
            stop_size = rec.key_len + rec.value_len;
            stop = STOP_SEND;
            stop_err = err;
            stop_line = lineno;
            break;
        }
        sent++;
        sf_producer_poll(p, 0);
        if (in_txn >= txn_size && (stop_err = txn_end(p, cli)) != SF_OK) {
            stop = STOP_TXN;
            break;
        }
        in_txn = in_txn >= txn_size ? 0 : in_txn;
    }
    /* The open transaction: the input ended (or a signal stopped it) after whole lines, so
     * it commits; a line that could not be sent or a read error aborts it. */
    if (in_txn && stop != STOP_TXN) {
        int err = stop == STOP_EOF && produce_interrupted < 2 ? txn_end(p, cli)
                                                              : abort_txn(p, cli);
        if (err && stop == STOP_EOF) {
            stop = STOP_TXN;
            stop_err = err;
        }
    }

    /* Deliver what was read: flush in short steps so that a second signal can abandon it. */
    while (sf_producer_outstanding(p) > 0 && produce_interrupted < 2 &&
           sf_producer_flush(p, 200) != SF_OK)
        ;
    sf_producer_destroy(p); /* serves the remaining callbacks (failed, when abandoned) */
    p = NULL;

    rc = SF_CLI_EXIT_OK;
    if (produce_st.failed) {
        char what[160];
        snprintf(what, sizeof(what), "%lld of %lld records not delivered; the first (line %lld)",
                 produce_st.failed, sent, produce_st.first_err_line);
        sf_cli_fail(cli, what, produce_st.first_err);
        rc = SF_CLI_EXIT_FAIL;
    }
    if (stop == STOP_NOSEP) {
        sf_cli_error(cli, "line %lld has no key separator \"%s\"; stopped there (the %lld "
                     "lines before it were sent)", stop_line, keysep_arg, sent);
        rc = SF_CLI_EXIT_FAIL;
    } else if (stop == STOP_SEND) {
        char what[160], hint[160];
        const char *max = sf_conf_get(conf, "max.request.size");
        snprintf(what, sizeof(what), "line %lld", stop_line);
        snprintf(hint, sizeof(hint), "the record is %zu bytes, max.request.size is %s (see -X "
                                     "max.request.size=BYTES)", stop_size, max ? max : "?");
        rc = sf_cli_fail_hint(cli, what, stop_err, stop_err == SF_ERROR_TOOLARGE ? hint : NULL);
        if (rc == SF_CLI_EXIT_OK)
            rc = SF_CLI_EXIT_FAIL;
    } else if (stop == STOP_READ || stop == STOP_TXN) {
        rc = SF_CLI_EXIT_FAIL;
    }
    if (produce_st.report) {
        if (fclose(produce_st.report) != 0 && !produce_st.report_err)
            produce_st.report_err = errno;
        produce_st.report = NULL;
        if (produce_st.report_err) {
            sf_cli_error(cli, "--report-file %s: %s", report_path, strerror(produce_st.report_err));
            rc = SF_CLI_EXIT_FAIL;
        }
    }
    if (verbose)
        fprintf(stderr, "%lld records produced\n", produce_st.acked);

restore:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
out:
    if (p)
        sf_producer_destroy(p);
    if (produce_st.report)
        fclose(produce_st.report);
    produce_st.report = NULL;
    if (conf)
        sf_conf_destroy(conf);
    sf_clidata_headers_free(&headers);
    free(keysep);
    free(line);
    return rc;
}
