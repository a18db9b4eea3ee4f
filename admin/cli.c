/* Shared parts of the streamflow command (cli.h, cmdutil.h). */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"

#define SF_CLI_DEFAULT_BOOTSTRAP "127.0.0.1:9092"

/* The bootstrap servers of the last configuration built (for hints). */
static char cli_bootstrap_used[512];

int sf_cli_option(sf_cli_t *cli, int opt, const char *arg) {
    long long v;

    switch (opt) {
    case 'b':
        if (arg == NULL || *arg == '\0') {
            sf_cli_error(cli, "--bootstrap-server needs a value (host:port[,host:port...])");
            return -1;
        }
        cli->bootstrap = arg;
        return 1;
    case 0x100:
        if (arg == NULL || *arg == '\0') {
            sf_cli_error(cli, "--command-config needs a file name");
            return -1;
        }
        cli->command_config = arg;
        return 1;
    case 0x101:
        if (arg != NULL && strcmp(arg, "json") == 0) {
            cli->json = 1;
        } else if (arg != NULL && (strcmp(arg, "table") == 0 || strcmp(arg, "text") == 0)) {
            cli->json = 0;
        } else {
            sf_cli_error(cli, "invalid --output '%s': expected 'table' or 'json'",
                         arg ? arg : "");
            return -1;
        }
        return 1;
    case 0x102:
        if (sf_cli_parse_int(cli, "--timeout", arg, 1, INT_MAX, &v) < 0)
            return -1;
        cli->timeout_ms = (int)v;
        return 1;
    case 'X':
        if (arg == NULL || strchr(arg, '=') == NULL || arg[0] == '=') {
            sf_cli_error(cli, "invalid property '%s': expected KEY=VALUE (e.g. -X "
                              "security.protocol=SSL)", arg ? arg : "");
            return -1;
        }
        if (cli->nprops >= sizeof cli->props / sizeof cli->props[0]) {
            sf_cli_error(cli, "too many -X properties (at most %zu); put them in a file and "
                              "use --command-config",
                         sizeof cli->props / sizeof cli->props[0]);
            return -1;
        }
        cli->props[cli->nprops++] = arg;
        return 1;
    default:
        return 0;
    }
}

sf_conf_t *sf_cli_conf(sf_cli_t *cli) {
    char errstr[512];
    const char *bootstrap = cli->bootstrap;
    const char *v;
    sf_conf_t *conf;
    size_t i;
    int rc;

    if (bootstrap == NULL || *bootstrap == '\0') {
        bootstrap = getenv("STREAMFLOW_BOOTSTRAP");
        if (bootstrap == NULL || *bootstrap == '\0')
            bootstrap = SF_CLI_DEFAULT_BOOTSTRAP;
    }
    conf = sf_conf_new();
    if (conf == NULL) {
        sf_cli_error(cli, "out of memory");
        return NULL;
    }
    errstr[0] = '\0';
    rc = sf_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof errstr);
    if (rc != SF_OK) {
        sf_cli_error(cli, "invalid bootstrap server list '%s': %s", bootstrap,
                     errstr[0] ? errstr : sf_error_str(rc));
        goto err;
    }
    if (cli->command_config != NULL) {
        errstr[0] = '\0';
        rc = sf_conf_load_file(conf, cli->command_config, errstr, sizeof errstr);
        if (rc != SF_OK) {
            sf_cli_error(cli, "--command-config: %s",
                         errstr[0] ? errstr : sf_error_str(rc));
            goto err;
        }
    }
    for (i = 0; i < cli->nprops; i++) {
        const char *eq = strchr(cli->props[i], '=');
        char key[256];
        size_t klen;

        if (eq == NULL || eq == cli->props[i] || (size_t)(eq - cli->props[i]) >= sizeof key) {
            sf_cli_error(cli, "invalid property '%s': expected KEY=VALUE", cli->props[i]);
            goto err;
        }
        klen = (size_t)(eq - cli->props[i]);
        memcpy(key, cli->props[i], klen);
        key[klen] = '\0';
        errstr[0] = '\0';
        rc = sf_conf_set(conf, key, eq + 1, errstr, sizeof errstr);
        if (rc != SF_OK) {
            sf_cli_error(cli, "-X %s: %s", cli->props[i],
                         errstr[0] ? errstr : sf_error_str(rc));
            goto err;
        }
    }
    v = sf_conf_get(conf, "bootstrap.servers");
    snprintf(cli_bootstrap_used, sizeof cli_bootstrap_used, "%s", v ? v : bootstrap);
    return conf;
err:
    sf_conf_destroy(conf);
    return NULL;
}

const char *sf_cli_bootstrap(const sf_cli_t *cli) {
    const char *b;

    if (cli_bootstrap_used[0] != '\0')
        return cli_bootstrap_used;
    if (cli->bootstrap != NULL && *cli->bootstrap != '\0')
        return cli->bootstrap;
    b = getenv("STREAMFLOW_BOOTSTRAP");
    return b != NULL && *b != '\0' ? b : SF_CLI_DEFAULT_BOOTSTRAP;
}

void sf_cli_error(const sf_cli_t *cli, const char *fmt, ...) {
    va_list ap;

    fflush(stdout);
    fprintf(stderr, "%s: ", cli->prog[0] ? cli->prog : "streamflow");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* What to try after @err, or NULL. */
static const char *cli_hint(const sf_cli_t *cli, int err, char *buf, size_t size) {
    switch (err) {
    case SF_ERROR_TIMED_OUT:
    case SF_ERROR_TRANSPORT:
        snprintf(buf, size, "is a broker listening on %s? see --bootstrap-server (or "
                            "STREAMFLOW_BOOTSTRAP) and --timeout", sf_cli_bootstrap(cli));
        return buf;
    case SF_ERROR_RESOLVE:
        snprintf(buf, size, "check the host names in %s (see --bootstrap-server)",
                 sf_cli_bootstrap(cli));
        return buf;
    case SF_ERROR_TLS:
        return "check security.protocol and the ssl.* settings (--command-config or -X)";
    case SF_ERROR_UNSUPPORTED:
        return "the broker does not support a version of this request the client speaks";
    case SF_ERROR_INVALID:
        return "check the command line and the client configuration";
    case 3: /* UNKNOWN_TOPIC_OR_PARTITION */
        return "see 'streamflow topic list'";
    case 7: /* REQUEST_TIMED_OUT */
        return "the broker did not finish in time; retry, or raise --timeout";
    case 29: /* TOPIC_AUTHORIZATION_FAILED */
    case 31: /* CLUSTER_AUTHORIZATION_FAILED */
        return "the broker refused this client's access";
    case 35: /* UNSUPPORTED_VERSION */
        return "the broker does not support this request";
    case 41: /* NOT_CONTROLLER */
        return "the controller moved; retry";
    case 73: /* TOPIC_DELETION_DISABLED */
        return "the broker runs with delete.topic.enable=false";
    default:
        return NULL;
    }
}

int sf_cli_fail_hint(const sf_cli_t *cli, const char *what, int err, const char *hint) {
    char buf[1024];

    if (hint == NULL)
        hint = cli_hint(cli, err, buf, sizeof buf);
    if (hint != NULL)
        sf_cli_error(cli, "%s: %s (%s); %s", what, sf_error_str(err), sf_error_name(err), hint);
    else
        sf_cli_error(cli, "%s: %s (%s)", what, sf_error_str(err), sf_error_name(err));
    return sf_cli_exit_code(err);
}

int sf_cli_fail_msg(const sf_cli_t *cli, const char *what, int err, const char *msg,
                    const char *hint) {
    char buf[1024];

    if (msg == NULL || *msg == '\0')
        return sf_cli_fail_hint(cli, what, err, hint);
    if (hint == NULL)
        hint = cli_hint(cli, err, buf, sizeof buf);
    if (hint != NULL)
        sf_cli_error(cli, "%s: %s (%s); %s", what, msg, sf_error_name(err), hint);
    else
        sf_cli_error(cli, "%s: %s (%s)", what, msg, sf_error_name(err));
    return sf_cli_exit_code(err);
}

int sf_cli_fail(const sf_cli_t *cli, const char *what, int err) {
    return sf_cli_fail_hint(cli, what, err, NULL);
}

int sf_cli_exit_code(int err) {
    switch (err) {
    case SF_OK:
        return SF_CLI_EXIT_OK;
    case SF_ERROR_TIMED_OUT:
    case SF_ERROR_TRANSPORT:
    case SF_ERROR_RESOLVE:
    case SF_ERROR_TLS:
        return SF_CLI_EXIT_UNREACHABLE;
    case SF_ERROR_INVALID:
        return SF_CLI_EXIT_USAGE;
    default:
        return SF_CLI_EXIT_FAIL;
    }
}

int sf_cli_parse_int(const sf_cli_t *cli, const char *what, const char *s, long long min,
                     long long max, long long *out) {
    char *end;
    long long v;

    if (s == NULL || *s == '\0') {
        sf_cli_error(cli, "%s needs a number", what);
        return -1;
    }
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || end == s || v < min || v > max) {
        if (max == LLONG_MAX)
            sf_cli_error(cli, "invalid %s '%s': expected an integer >= %lld", what, s, min);
        else
            sf_cli_error(cli, "invalid %s '%s': expected an integer from %lld to %lld", what,
                         s, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int sf_cli_getopt(sf_cli_t *cli, int argc, char **argv, const char *shortopts,
                  const struct option *longopts) {
    char opts[128];
    int opt, rc;

    /* A leading ':' (after a '+', which stops at the first non-option) makes getopt report
     * a missing argument as ':' and stay quiet. */
    if (shortopts[0] == '+')
        snprintf(opts, sizeof opts, "+:%s", shortopts + 1);
    else
        snprintf(opts, sizeof opts, ":%s", shortopts);
    opterr = 0;
    for (;;) {
        opt = getopt_long(argc, argv, opts, longopts, NULL);
        if (opt == -1)
            return -1;
        if (opt == '?') {
            if (optopt != 0 && optopt < 0x100 && optopt != '?')
                sf_cli_error(cli, "unknown option '-%c'; see '%s --help'", optopt, cli->prog);
            else
                sf_cli_error(cli, "unknown option '%s'; see '%s --help'",
                             optind > 0 && optind - 1 < argc ? argv[optind - 1] : "?",
                             cli->prog);
            return '?';
        }
        if (opt == ':') {
            const char *name = optind > 0 && optind - 1 < argc ? argv[optind - 1] : "?";

            sf_cli_error(cli, "option '%s' needs a value; see '%s --help'", name, cli->prog);
            return '?';
        }
        if (opt == 'h')
            return opt;
        rc = sf_cli_option(cli, opt, optarg);
        if (rc < 0)
            return '?';
        if (rc == 0)
            return opt;
    }
}

void sf_cli_print_common_options(FILE *out) {
    fputs("\nCommon options:\n"
          "  -b, --bootstrap-server LIST  brokers to contact first, HOST:PORT[,HOST:PORT...]\n"
          "                               (default: $STREAMFLOW_BOOTSTRAP, else "
          SF_CLI_DEFAULT_BOOTSTRAP ")\n"
          "      --command-config FILE    client properties file (Kafka names:\n"
          "                               security.protocol, ssl.truststore.location, ...)\n"
          "  -X, --property KEY=VALUE     a client property, applied after the file "
          "(repeatable)\n"
          "      --output table|json      output format (default: table)\n"
          "      --timeout MS             how long to wait for the cluster (default: 30000)\n"
          "  -h, --help                   show this help\n",
          out);
}

sf_admin_t *sf_cli_admin(sf_cli_t *cli) {
    char errstr[512];
    sf_conf_t *conf;
    sf_admin_t *a;

    conf = sf_cli_conf(cli);
    if (conf == NULL)
        return NULL;
    errstr[0] = '\0';
    a = sf_admin_new(conf, errstr, sizeof errstr);
    sf_conf_destroy(conf);
    if (a == NULL)
        sf_cli_error(cli, "cannot create the admin client: %s",
                     errstr[0] ? errstr : "out of memory");
    return a;
}

int sf_cli_parse_kv(const sf_cli_t *cli, const char *what, char *s, sf_config_kv_t *kv) {
    char *eq = strchr(s, '=');

    if (eq == NULL || eq == s) {
        sf_cli_error(cli, "invalid %s '%s': expected KEY=VALUE (e.g. retention.ms=86400000)",
                     what, s);
        return -1;
    }
    *eq = '\0';
    kv->name = s;
    kv->value = eq + 1;
    return 0;
}

const char *sf_cli_config_source_name(int source) {
    switch (source) {
    case 1:
        return "DYNAMIC_TOPIC_CONFIG";
    case 2:
        return "DYNAMIC_BROKER_CONFIG";
    case 3:
        return "DYNAMIC_DEFAULT_BROKER_CONFIG";
    case 4:
        return "STATIC_BROKER_CONFIG";
    case 5:
        return "DEFAULT_CONFIG";
    case 6:
        return "DYNAMIC_BROKER_LOGGER_CONFIG";
    case 7:
        return "CLIENT_METRICS_CONFIG";
    case 8:
        return "GROUP_CONFIG";
    default:
        return "UNKNOWN";
    }
}

json_t *sf_cli_json_ids(const int32_t *ids, size_t n) {
    json_t *a = json_array();
    size_t i;

    for (i = 0; i < n; i++)
        json_array_append_new(a, json_integer(ids[i]));
    return a;
}

const char *sf_cli_join_ids(const int32_t *ids, size_t n, char *buf, size_t size) {
    size_t i, off = 0;

    if (size == 0)
        return buf;
    buf[0] = '\0';
    for (i = 0; i < n && off < size; i++) {
        int w = snprintf(buf + off, size - off, "%s%d", i ? "," : "", (int)ids[i]);
        if (w < 0)
            break;
        off += (size_t)w;
    }
    return buf;
}

/* ------------------------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------------------------ */

struct sf_cli_table {
    size_t ncols;
    char **headers;
    char ***rows;
    size_t nrows, caprows;
    int oom;
};

static char *cli_strdup(const char *s) {
    return strdup(s != NULL ? s : "-");
}

sf_cli_table_t *sf_cli_table_new(size_t ncols, const char *const *headers) {
    sf_cli_table_t *t;
    size_t i;

    t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->ncols = ncols;
    t->headers = calloc(ncols ? ncols : 1, sizeof *t->headers);
    if (t->headers == NULL) {
        free(t);
        return NULL;
    }
    for (i = 0; i < ncols; i++) {
        t->headers[i] = cli_strdup(headers[i]);
        if (t->headers[i] == NULL)
            t->oom = 1;
    }
    return t;
}

void sf_cli_table_add(sf_cli_table_t *t, const char *const *cells) {
    char **row;
    size_t i;

    if (t == NULL)
        return;
    if (t->nrows == t->caprows) {
        size_t cap = t->caprows ? t->caprows * 2 : 16;
        char ***rows = realloc(t->rows, cap * sizeof *rows);
        if (rows == NULL) {
            t->oom = 1;
            return;
        }
        t->rows = rows;
        t->caprows = cap;
    }
    row = calloc(t->ncols ? t->ncols : 1, sizeof *row);
    if (row == NULL) {
        t->oom = 1;
        return;
    }
    for (i = 0; i < t->ncols; i++) {
        row[i] = cli_strdup(cells[i]);
        if (row[i] == NULL)
            t->oom = 1;
    }
    t->rows[t->nrows++] = row;
}

static void cli_table_line(const sf_cli_table_t *t, char **cells, const size_t *width,
                           FILE *out) {
    size_t i;

    for (i = 0; i < t->ncols; i++) {
        const char *c = cells[i] ? cells[i] : "-";
        if (i + 1 < t->ncols)
            fprintf(out, "%-*s  ", (int)width[i], c);
        else
            fputs(c, out); /* no trailing blanks */
    }
    fputc('\n', out);
}

void sf_cli_table_print(sf_cli_table_t *t, FILE *out) {
    size_t *width, i, j;

    if (t == NULL)
        return;
    width = calloc(t->ncols ? t->ncols : 1, sizeof *width);
    if (width == NULL)
        return;
    for (i = 0; i < t->ncols; i++) {
        width[i] = t->headers[i] ? strlen(t->headers[i]) : 1;
        for (j = 0; j < t->nrows; j++) {
            size_t l = t->rows[j][i] ? strlen(t->rows[j][i]) : 1;
            if (l > width[i])
                width[i] = l;
        }
    }
    cli_table_line(t, t->headers, width, out);
    for (j = 0; j < t->nrows; j++)
        cli_table_line(t, t->rows[j], width, out);
    free(width);
}

void sf_cli_table_free(sf_cli_table_t *t) {
    size_t i, j;

    if (t == NULL)
        return;
    for (j = 0; j < t->nrows; j++) {
        for (i = 0; i < t->ncols; i++)
            free(t->rows[j][i]);
        free(t->rows[j]);
    }
    free(t->rows);
    for (i = 0; i < t->ncols; i++)
        free(t->headers[i]);
    free(t->headers);
    free(t);
}

void sf_cli_json_print(json_t *j) {
    if (j == NULL) {
        fputs("null\n", stdout);
        return;
    }
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(j);
}
