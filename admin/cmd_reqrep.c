/* streamflow request / streamflow respond: request/reply over topics (sf_requester,
 * sf_responder). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clidata.h"

extern char **environ;

/* ---- request ---------------------------------------------------------------------------- */

static const char request_usage[] =
    "Usage: streamflow request TOPIC [OPTIONS] VALUE|-\n"
    "\n"
    "Send one request record with value VALUE (-: all of standard input, byte for byte) to\n"
    "TOPIC and print the value of the reply, then a newline. The reply comes back on the\n"
    "reply topic, which is created with the broker's defaults when missing. Exits 1 with\n"
    "\"no reply within N ms\" when no reply came in time.\n"
    "\n"
    "Options:\n"
    "  --timeout-ms N         how long to wait for the reply (default: --timeout, 30000)\n"
    "  --key KEY              the request's key (default: none)\n"
    "  --header KEY=VALUE     a request header (repeatable)\n"
    "  --partition N          send the request to partition N (default: the partitioner's)\n"
    "  --reply-topic TOPIC    where replies come back (default: TOPIC.replies)\n";

enum {
    OPT_TIMEOUT_MS = 0x200,
    OPT_KEY,
    OPT_HEADER,
    OPT_PARTITION,
    OPT_REPLY_TOPIC,
    OPT_EXEC,
    OPT_ECHO,
    OPT_MAX_REQUESTS
};

/* The exit code when sf_requester_new/sf_responder_new failed with @errstr: they return no
 * error code, and their configuration was checked before, so what is left is the cluster
 * (unreachable when the message says something did not come in time). */
static int reqrep_new_failed(const char *errstr) {
    return strstr(errstr, "in time") || strstr(errstr, "connect") ? SF_CLI_EXIT_UNREACHABLE
                                                                   : SF_CLI_EXIT_FAIL;
}

/* Read all of standard input into *@buf (caller frees). Returns 0 or -1 (errno). */
static int read_all_stdin(char **buf, size_t *len) {
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);

    if (!b)
        return -1;
    for (;;) {
        size_t r;
        if (n == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
        r = fread(b + n, 1, cap - n, stdin);
        n += r;
        if (r == 0) {
            if (ferror(stdin)) {
                free(b);
                return -1;
            }
            break;
        }
    }
    *buf = b;
    *len = n;
    return 0;
}

int sf_cmd_request(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS},
        {"key", required_argument, NULL, OPT_KEY},
        {"header", required_argument, NULL, OPT_HEADER},
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"reply-topic", required_argument, NULL, OPT_REPLY_TOPIC},
        {NULL, 0, NULL, 0}};
    sf_clidata_headers_t headers = {0};
    const char *topic, *key = NULL, *reply_topic = NULL;
    char *reply_topic_buf = NULL, *stdin_value = NULL;
    long long timeout_ms = -1, partition = SF_PARTITION_ANY;
    int rc = SF_CLI_EXIT_USAGE, c, err;
    sf_conf_t *conf = NULL;
    sf_requester_t *req = NULL;
    sf_message_t *reply = NULL;
    sf_record_t rec;
    char errstr[512];

    memset(&rec, 0, sizeof(rec));
    optind = 0;
    while ((c = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (c) {
        case 'h':
            fputs(request_usage, stdout);
            sf_cli_print_common_options(stdout);
            rc = SF_CLI_EXIT_OK;
            goto out;
        case OPT_TIMEOUT_MS:
            if (sf_cli_parse_int(cli, "--timeout-ms", optarg, 1, INT_MAX, &timeout_ms) < 0)
                goto out;
            break;
        case OPT_KEY: key = optarg; break;
        case OPT_HEADER:
            if (sf_clidata_headers_add(cli, &headers, optarg) < 0)
                goto out;
            break;
        case OPT_PARTITION:
            if (sf_cli_parse_int(cli, "--partition", optarg, 0, INT32_MAX, &partition) < 0)
                goto out;
            break;
        case OPT_REPLY_TOPIC: reply_topic = optarg; break;
        default:
            goto out;
        }
    }
    if (argc - optind != 2) {
        sf_cli_error(cli, "expected TOPIC and VALUE (or - for standard input); see '%s --help'",
                     cli->prog);
        goto out;
    }
    topic = argv[optind];
    if (timeout_ms < 0)
        timeout_ms = cli->timeout_ms;
    if (!reply_topic) {
        size_t n = strlen(topic) + sizeof(".replies");
        reply_topic_buf = malloc(n);
        if (!reply_topic_buf) {
            sf_cli_error(cli, "out of memory");
            rc = SF_CLI_EXIT_FAIL;
            goto out;
        }
        snprintf(reply_topic_buf, n, "%s.replies", topic);
        reply_topic = reply_topic_buf;
    }
    rec.topic = topic;
    rec.partition = (int32_t)partition;
    if (key) {
        rec.key = key;
        rec.key_len = strlen(key);
    }
    rec.headers = headers.v;
    rec.header_count = headers.n;
    if (!strcmp(argv[optind + 1], "-")) {
        size_t len;
        if (read_all_stdin(&stdin_value, &len) < 0) {
            sf_cli_error(cli, "reading standard input: %s", strerror(errno));
            rc = SF_CLI_EXIT_FAIL;
            goto out;
        }
        rec.value = stdin_value;
        rec.value_len = len;
    } else {
        rec.value = argv[optind + 1];
        rec.value_len = strlen(argv[optind + 1]);
    }

    if (!(conf = sf_cli_conf(cli)))
        goto out;
    {
        /* One request: nothing waits longer than the request itself, unless configured. */
        char v[16];
        snprintf(v, sizeof(v), "%lld", timeout_ms);
        if (sf_clidata_conf_soft(cli, conf, "max.block.ms", "60000", v) < 0 ||
            sf_clidata_conf_soft(cli, conf, "request.timeout.ms", "30000", v) < 0)
            goto out;
    }
    errstr[0] = '\0';
    req = sf_requester_new(conf, reply_topic, SF_PARTITION_ANY, errstr, sizeof(errstr));
    if (!req) {
        sf_cli_error(cli, "cannot create a requester: %s", errstr[0] ? errstr : "out of memory");
        rc = reqrep_new_failed(errstr);
        goto out;
    }
    err = sf_request(req, &rec, (int)timeout_ms, &reply);
    if (err == SF_ERROR_TIMED_OUT) {
        sf_cli_error(cli, "no reply within %lld ms (is a responder reading %s? see 'streamflow "
                          "respond')", timeout_ms, topic);
        rc = SF_CLI_EXIT_FAIL;
        goto out;
    }
    if (err) {
        rc = sf_cli_fail(cli, "sending the request", err);
        goto out;
    }
    if (reply->value)
        fwrite(reply->value, 1, reply->value_len, stdout);
    putchar('\n');
    rc = SF_CLI_EXIT_OK;
    if (fflush(stdout) != 0) {
        sf_cli_error(cli, "writing standard output: %s", strerror(errno));
        rc = SF_CLI_EXIT_FAIL;
    }
out:
    if (reply)
        sf_message_destroy(reply);
    if (req)
        sf_requester_destroy(req);
    if (conf)
        sf_conf_destroy(conf);
    sf_clidata_headers_free(&headers);
    free(reply_topic_buf);
    free(stdin_value);
    return rc;
}

/* ---- respond ---------------------------------------------------------------------------- */

static const char respond_usage[] =
    "Usage: streamflow respond TOPIC (--echo | --exec CMD) [OPTIONS]\n"
    "\n"
    "Answer the request records that arrive on TOPIC from now on (as sent by 'streamflow\n"
    "request' or sf_request), until SIGINT/SIGTERM or --max-requests. Prints \"Waiting for\n"
    "requests on TOPIC\" to standard error once every request sent from then on will be\n"
    "seen, and \"Processed a total of N requests\" at the end.\n"
    "\n"
    "Options:\n"
    "  --echo                 reply with the request's value\n"
    "  --exec CMD             run CMD with /bin/sh for each request, the request's value on\n"
    "                         its standard input, and reply with its standard output. The\n"
    "                         environment holds STREAMFLOW_TOPIC, STREAMFLOW_PARTITION,\n"
    "                         STREAMFLOW_OFFSET and (for a key without NUL bytes)\n"
    "                         STREAMFLOW_KEY. When CMD exits non-zero, the reply still\n"
    "                         carries its output, plus a header exit-status=N\n"
    "  --partition N          read requests from partition N only (default: all)\n"
    "  --max-requests N       stop after answering N requests\n"
    "  -q, --quiet            print neither of the lines above\n"
    "\n"
    "Replies carry the request's key.\n";

typedef struct respond_state {
    const sf_cli_t *cli;
    const char *exec_cmd; /* NULL: echo */
    long long max_requests;
    long long answered;
    char *out;            /* the last command's output (kept until the next request) */
    size_t out_len;
    char status[16];
    sf_header_t status_hdr;
} respond_state_t;

static sf_responder_t *volatile respond_handle;

static void respond_on_signal(int sig) {
    (void)sig;
    if (respond_handle)
        sf_responder_stop(respond_handle); /* async-signal-safe */
}

/* Run st->exec_cmd with @req's value on its standard input and its standard output
 * collected in st->out. Returns the exit status (128 + signal when killed) or -1 when it
 * could not be started. */
static int respond_exec(respond_state_t *st, const sf_message_t *req) {
    int in[2] = {-1, -1}, out[2] = {-1, -1}, status = 0;
    const unsigned char *val = req->value;
    size_t val_len = req->value ? req->value_len : 0, written = 0, nenv = 0;
    char **envp = NULL, *vars[4] = {NULL, NULL, NULL, NULL};
    pid_t pid;
    char *const shargv[] = {(char *)"sh", (char *)"-c", (char *)st->exec_cmd, NULL};

    free(st->out);
    st->out = NULL;
    st->out_len = 0;

    /* The environment is built before fork: the child may only call async-signal-safe
     * functions (this process has other threads). */
    while (environ[nenv])
        nenv++;
    envp = calloc(nenv + 5, sizeof(*envp));
    if (!envp)
        return -1;
    {
        size_t n = 0;
        for (size_t i = 0; i < nenv; i++)
            if (strncmp(environ[i], "STREAMFLOW_TOPIC=", 17) != 0 &&
                strncmp(environ[i], "STREAMFLOW_PARTITION=", 21) != 0 &&
                strncmp(environ[i], "STREAMFLOW_OFFSET=", 18) != 0 &&
                strncmp(environ[i], "STREAMFLOW_KEY=", 15) != 0)
                envp[n++] = environ[i];
        if (asprintf(&vars[0], "STREAMFLOW_TOPIC=%s", req->topic) < 0)
            vars[0] = NULL;
        if (asprintf(&vars[1], "STREAMFLOW_PARTITION=%d", (int)req->partition) < 0)
            vars[1] = NULL;
        if (asprintf(&vars[2], "STREAMFLOW_OFFSET=%lld", (long long)req->offset) < 0)
            vars[2] = NULL;
        if (req->key && !memchr(req->key, '\0', req->key_len) &&
            asprintf(&vars[3], "STREAMFLOW_KEY=%.*s", (int)req->key_len,
                     (const char *)req->key) < 0)
            vars[3] = NULL;
        for (int i = 0; i < 4; i++)
            if (vars[i])
                envp[n++] = vars[i];
        envp[n] = NULL;
    }

    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        goto fail;
    pid = fork();
    if (pid < 0)
        goto fail;
    if (pid == 0) {
        sigset_t none;
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGTERM, &dfl, NULL);
        sigaction(SIGPIPE, &dfl, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0)
            _exit(127);
        execve("/bin/sh", shargv, envp);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    in[0] = out[1] = -1;
    if (val_len == 0) {
        close(in[1]);
        in[1] = -1;
    } else {
        fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
    }
    /* Feed standard input and drain standard output together: either may fill its pipe. */
    for (;;) {
        struct pollfd pfd[2];
        int nfd = 0;
        pfd[nfd].fd = out[0];
        pfd[nfd].events = POLLIN;
        nfd++;
        if (in[1] >= 0) {
            pfd[nfd].fd = in[1];
            pfd[nfd].events = POLLOUT;
            nfd++;
        }
        if (poll(pfd, (nfds_t)nfd, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (nfd == 2 && (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(in[1], val + written, val_len - written);
            if (w > 0)
                written += (size_t)w;
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == val_len) {
                close(in[1]); /* done, or the command does not read its input (EPIPE) */
                in[1] = -1;
            }
        }
        if (pfd[0].revents & (POLLIN | POLLERR | POLLHUP)) {
            char buf[65536];
            ssize_t r = read(out[0], buf, sizeof(buf));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            {
                char *nb = realloc(st->out, st->out_len + (size_t)r);
                if (!nb)
                    break;
                st->out = nb;
                memcpy(st->out + st->out_len, buf, (size_t)r);
                st->out_len += (size_t)r;
            }
        }
    }
    if (in[1] >= 0)
        close(in[1]);
    close(out[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    for (int i = 0; i < 4; i++)
        free(vars[i]);
    free(envp);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
fail:
    sf_cli_error(st->cli, "--exec: cannot run the command: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
    }
    for (int i = 0; i < 4; i++)
        free(vars[i]);
    free(envp);
    return -1;
}

static int respond_cb(const sf_message_t *req, sf_record_t *reply, void *opaque) {
    respond_state_t *st = opaque;

    reply->key = req->key;
    reply->key_len = req->key_len;
    if (!st->exec_cmd) {
        reply->value = req->value;
        reply->value_len = req->value_len;
    } else {
        int status = respond_exec(st, req);
        if (status < 0)
            return 1; /* no reply: the requester times out */
        reply->value = st->out ? st->out : "";
        reply->value_len = st->out_len;
        if (status != 0) {
            sf_cli_error(st->cli, "--exec: the command exited with status %d (request at "
                                  "offset %lld of partition %d)",
                         status, (long long)req->offset, (int)req->partition);
            snprintf(st->status, sizeof(st->status), "%d", status);
            st->status_hdr.key = "exit-status";
            st->status_hdr.value = st->status;
            st->status_hdr.value_len = strlen(st->status);
            reply->headers = &st->status_hdr;
            reply->header_count = 1;
        }
    }
    st->answered++;
    if (st->max_requests > 0 && st->answered >= st->max_requests && respond_handle)
        sf_responder_stop(respond_handle);
    return 0;
}

int sf_cmd_respond(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"exec", required_argument, NULL, OPT_EXEC},
        {"echo", no_argument, NULL, OPT_ECHO},
        {"max-requests", required_argument, NULL, OPT_MAX_REQUESTS},
        {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0}};
    respond_state_t st;
    const char *topic;
    long long partition = SF_PARTITION_ANY;
    int rc = SF_CLI_EXIT_USAGE, c, echo = 0, quiet = 0, handlers = 0;
    sf_conf_t *conf = NULL;
    sf_responder_t *r = NULL;
    char errstr[512];
    struct sigaction sa, old_int, old_term, old_pipe;

    memset(&st, 0, sizeof(st));
    st.cli = cli;
    optind = 0;
    while ((c = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS "q", longopts)) != -1) {
        switch (c) {
        case 'h':
            fputs(respond_usage, stdout);
            sf_cli_print_common_options(stdout);
            rc = SF_CLI_EXIT_OK;
            goto out;
        case OPT_PARTITION:
            if (sf_cli_parse_int(cli, "--partition", optarg, 0, INT32_MAX, &partition) < 0)
                goto out;
            break;
        case OPT_EXEC: st.exec_cmd = optarg; break;
        case OPT_ECHO: echo = 1; break;
        case OPT_MAX_REQUESTS:
            if (sf_cli_parse_int(cli, "--max-requests", optarg, 1, LLONG_MAX,
                                 &st.max_requests) < 0)
                goto out;
            break;
        case 'q': quiet = 1; break;
        default:
            goto out;
        }
    }
    if (!(topic = sf_clidata_topic_arg(cli, argc, argv)))
        goto out;
    if (echo == !!st.exec_cmd) {
        sf_cli_error(cli, "give one of --echo and --exec CMD; see '%s --help'", cli->prog);
        goto out;
    }
    if (!(conf = sf_cli_conf(cli)))
        goto out;
    errstr[0] = '\0';
    r = sf_responder_new(conf, topic, (int32_t)partition, respond_cb, &st, errstr,
                         sizeof(errstr));
    if (!r) {
        sf_cli_error(cli, "cannot create a responder: %s", errstr[0] ? errstr : "out of memory");
        rc = reqrep_new_failed(errstr);
        goto out;
    }
    respond_handle = r;
    if (!quiet) {
        fprintf(stderr, "Waiting for requests on %s\n", topic);
        fflush(stderr);
    }
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = respond_on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sa.sa_handler = SIG_IGN; /* a command that does not read its input */
    sigaction(SIGPIPE, &sa, &old_pipe);
    handlers = 1;

    c = sf_responder_run(r, -1);
    if (c < 0) {
        rc = sf_cli_fail(cli, "serving requests", c);
    } else {
        rc = SF_CLI_EXIT_OK;
    }
    if (!quiet)
        fprintf(stderr, "Processed a total of %lld requests\n", st.answered);
out:
    if (handlers) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
    }
    respond_handle = NULL;
    if (r)
        sf_responder_destroy(r);
    if (conf)
        sf_conf_destroy(conf);
    free(st.out);
    return rc;
}
