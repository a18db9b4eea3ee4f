/* Kafka's classic group protocol (group.h): members join (a new one first gets its member id,
 * KIP-394), the join phase ends when every member rejoined or the rebalance timeout passed
 * (the first one of an empty group waits group.initial.rebalance.delay.ms for more), the
 * generation moves on and the leader gets the members' metadata; the sync phase ends with the
 * leader's assignment, handed to every member; heartbeats keep a member's session, and a
 * member whose session runs out, or that leaves, starts the next rebalance. As in Kafka's
 * GroupCoordinator (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead). */
#include "group_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "err.h"
#include "logging.h"

static char *dupstr(const char *s) {
    return s ? strdup(s) : NULL;
}

static int same(const char *a, const char *b) {
    return a && b && !strcmp(a, b);
}

gmember_t *group_member(const sf_group_t *g, const char *id) {
    gmember_t *m;
    for (m = g->members; m && !same(m->id, id); m = m->next)
        ;
    return m;
}

int group_has_members(const sf_group_t *g) {
    return g->members != NULL || g->npending > 0;
}

static void protocols_free(sf_gprotocol_t *p, int n) {
    int i;
    for (i = 0; p && i < n; i++) {
        free((char *)p[i].name);
        free((uint8_t *)p[i].meta);
    }
    free(p);
}

static void member_free(gmember_t *m) {
    if (m->session_timer)
        event_free(m->session_timer);
    free(m->id);
    free(m->instance_id);
    free(m->client_id);
    free(m->client_host);
    protocols_free(m->protocols, m->nprotocols);
    free(m->assignment);
    free(m);
}

static void touch(gmember_t *m) {
    struct timeval tv = {m->session_ms / 1000, (m->session_ms % 1000) * 1000};
    evtimer_add(m->session_timer, &tv);
}

/* ---- answers ---- */

static void join_answer(gmember_t *m, int16_t err, const sf_gmember_info_t *members, int n) {
    sf_group_t *g = m->g;
    sf_gjoin_cb cb = m->join_cb;
    sf_gjoin_result_t r;
    if (!cb)
        return;
    m->join_cb = NULL;
    memset(&r, 0, sizeof(r));
    r.error = err;
    r.generation = err ? -1 : g->generation;
    r.protocol_type = g->protocol_type;
    r.protocol_name = err ? NULL : g->protocol_name;
    r.leader = err ? "" : g->leader;
    r.member_id = m->id;
    if (!err && same(m->id, g->leader)) {
        r.members = members;
        r.nmembers = n;
        r.skip_assignment = m->skip_assignment;
    }
    m->skip_assignment = 0;
    cb(m->join_arg, &r);
}

static void sync_answer(gmember_t *m, int16_t err) {
    sf_gsync_cb cb = m->sync_cb;
    if (!cb)
        return;
    m->sync_cb = NULL;
    cb(m->sync_arg, err, m->g->protocol_type, m->g->protocol_name, err ? NULL : m->assignment,
       err ? 0 : m->assignment_len);
}

/* The members' metadata for the chosen protocol (malloc'd; NULL with n 0 on no memory). */
static sf_gmember_info_t *member_infos(const sf_group_t *g, int *n) {
    sf_gmember_info_t *v = calloc((size_t)g->nmembers + 1, sizeof(*v));
    gmember_t *m;
    int i;
    *n = 0;
    for (m = g->members; v && m; m = m->next) {
        sf_gmember_info_t *x = &v[(*n)++];
        x->member_id = m->id;
        x->instance_id = m->instance_id;
        for (i = 0; i < m->nprotocols; i++)
            if (same(m->protocols[i].name, g->protocol_name)) {
                x->meta = m->protocols[i].meta;
                x->len = m->protocols[i].len;
            }
    }
    return v;
}

/* Answer a member's join with the current generation (a rejoin that changes nothing). */
static void join_current(gmember_t *m) {
    int n;
    sf_gmember_info_t *v = member_infos(m->g, &n);
    join_answer(m, SF_KERR_NONE, v, n);
    free(v);
}

/* ---- protocol selection ---- */

static int supports(const gmember_t *m, const char *name) {
    int i;
    for (i = 0; i < m->nprotocols; i++)
        if (same(m->protocols[i].name, name))
            return 1;
    return 0;
}

static int all_support(const sf_group_t *g, const char *name) {
    const gmember_t *m;
    for (m = g->members; m; m = m->next)
        if (!supports(m, name))
            return 0;
    return 1;
}

/* Kafka's selectProtocol: of the protocols every member supports, the one most members list
 * first among those. NULL if none is common. */
static const char *select_protocol(const sf_group_t *g) {
    const gmember_t *first = g->members, *m;
    const char *best = NULL;
    int i, k, best_votes = -1;
    if (!first)
        return NULL;
    for (i = 0; i < first->nprotocols; i++) {
        const char *cand = first->protocols[i].name;
        int votes = 0;
        if (!all_support(g, cand))
            continue;
        for (m = g->members; m; m = m->next)
            for (k = 0; k < m->nprotocols; k++)
                if (all_support(g, m->protocols[k].name)) {
                    votes += same(m->protocols[k].name, cand);
                    break;
                }
        if (votes > best_votes) {
            best = cand;
            best_votes = votes;
        }
    }
    return best;
}

/* Whether a joining member's protocols fit the group (INCONSISTENT_GROUP_PROTOCOL if not). */
static int protocols_fit(const sf_group_t *g, const sf_gjoin_t *req) {
    int i;
    if (!req->protocol_type || !*req->protocol_type || req->nprotocols < 1)
        return 0;
    if (!g->members)
        return 1;
    if (!same(g->protocol_type, req->protocol_type))
        return 0;
    for (i = 0; i < req->nprotocols; i++)
        if (all_support(g, req->protocols[i].name))
            return 1;
    return 0;
}

/* ---- the join phase ---- */

static void unlink_member(sf_group_t *g, gmember_t *m) {
    gmember_t **pp;
    for (pp = &g->members; *pp && *pp != m; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = m->next;
    g->nmembers--;
    if (same(g->leader, m->id)) {
        free(g->leader);
        g->leader = g->members ? dupstr(g->members->id) : NULL;
    }
}

static void pending_clear(sf_group_t *g) {
    int i;
    for (i = 0; i < g->npending; i++)
        free(g->pending[i].id);
    free(g->pending);
    g->pending = NULL;
    g->npending = 0;
}

static void complete_join(sf_group_t *g) {
    gmember_t *m, *next;
    sf_gmember_info_t *v;
    int n;
    evtimer_del(g->join_timer);
    g->join_deadline_ms = g->phase_end_ms = 0;
    for (m = g->members; m; m = next) { /* those that did not rejoin in time are gone */
        next = m->next;
        if (!m->join_cb) {
            sf_log(SF_LOG_INFO, "GROUP", "group %s: member %s did not rejoin in time", g->id,
                   m->id);
            sync_answer(m, SF_KERR_REBALANCE_IN_PROGRESS);
            unlink_member(g, m);
            member_free(m);
        }
    }
    pending_clear(g);
    g->generation++;
    free(g->protocol_name);
    g->protocol_name = NULL;
    if (!g->members) {
        g->state = GS_EMPTY; /* the protocol type stays, as Kafka's */
        sf_log(SF_LOG_INFO, "GROUP", "group %s is empty (generation %d)", g->id, g->generation);
        group_state_save(g);
        return;
    }
    g->protocol_name = dupstr(select_protocol(g));
    if (!g->leader)
        g->leader = dupstr(g->members->id);
    g->state = GS_COMPLETING;
    sf_log(SF_LOG_INFO, "GROUP", "group %s: generation %d with %d member(s), protocol %s",
           g->id, g->generation, g->nmembers, g->protocol_name ? g->protocol_name : "-");
    v = member_infos(g, &n);
    for (m = g->members; m; m = next) {
        next = m->next;
        touch(m);
        join_answer(m, SF_KERR_NONE, v, n);
    }
    free(v);
}

static int all_joined(const sf_group_t *g) {
    const gmember_t *m;
    if (g->npending)
        return 0;
    for (m = g->members; m; m = m->next)
        if (!m->join_cb)
            return 0;
    return 1;
}

static void try_complete_join(sf_group_t *g) {
    if (g->state == GS_PREPARING && !g->join_deadline_ms && all_joined(g))
        complete_join(g);
}

static int take_pending(sf_group_t *g, const char *id);

static void timer_at(sf_group_t *g, int64_t when_ms) {
    int64_t d = when_ms - sf_clock_mono_ms();
    struct timeval tv;
    d = d < 0 ? 0 : d + 1;
    tv.tv_sec = (time_t)(d / 1000);
    tv.tv_usec = (suseconds_t)(d % 1000) * 1000;
    evtimer_add(g->join_timer, &tv);
}

/* The join timer: the end of the join phase (g->phase_end_ms while preparing, 0 otherwise)
 * or the first expiry of a member id handed out and not used, whichever comes first. The
 * initial delay keeps its own ticks. */
static void arm_timer(sf_group_t *g) {
    int64_t first = g->phase_end_ms ? g->phase_end_ms : INT64_MAX;
    int i;
    take_pending(g, NULL);
    for (i = 0; i < g->npending; i++)
        if (g->pending[i].expires_ms < first)
            first = g->pending[i].expires_ms;
    if (first != INT64_MAX)
        timer_at(g, first);
}

static void join_timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_group_t *g = arg;
    int64_t left = g->join_deadline_ms - sf_clock_mono_ms();
    (void)fd;
    (void)what;
    if (g->state != GS_PREPARING || (!g->join_deadline_ms &&
                                      sf_clock_mono_ms() < g->phase_end_ms)) {
        /* a member id expired: a join phase may be complete without it */
        arm_timer(g);
        try_complete_join(g);
        group_maybe_free(g);
        return;
    }
    if (g->join_deadline_ms && g->initial_joined && left > 0) {
        /* The initial delay: members are still arriving, so wait once more. */
        int32_t d = g->c->cfg.initial_delay_ms < left ? g->c->cfg.initial_delay_ms : (int32_t)left;
        struct timeval tv = {d / 1000, (d % 1000) * 1000};
        g->initial_joined = 0;
        evtimer_add(g->join_timer, &tv);
        return;
    }
    complete_join(g);
    group_maybe_free(g);
}

int group_timer_new(sf_group_t *g) {
    g->join_timer = evtimer_new(g->c->base, join_timer_cb, g);
    return g->join_timer ? SF_OK : SF_ERR_NOMEM;
}

static int32_t rebalance_timeout(const sf_group_t *g) {
    const gmember_t *m;
    int32_t t = 0;
    for (m = g->members; m; m = m->next)
        if (m->rebalance_ms > t)
            t = m->rebalance_ms;
    return t;
}

static void prepare_rebalance(sf_group_t *g, const char *why) {
    int32_t timeout = rebalance_timeout(g), delay = timeout;
    gmember_t *m;
    if (g->state == GS_COMPLETING)
        for (m = g->members; m; m = m->next) {
            free(m->assignment);
            m->assignment = NULL;
            m->assignment_len = 0;
            sync_answer(m, SF_KERR_REBALANCE_IN_PROGRESS);
        }
    g->join_deadline_ms = 0;
    if (g->state == GS_EMPTY && g->c->cfg.initial_delay_ms > 0) {
        delay = g->c->cfg.initial_delay_ms < timeout ? g->c->cfg.initial_delay_ms : timeout;
        g->join_deadline_ms = sf_clock_mono_ms() + timeout;
        g->initial_joined = 0;
    }
    g->state = GS_PREPARING;
    sf_log(SF_LOG_INFO, "GROUP", "group %s: rebalancing (%s)", g->id, why);
    g->phase_end_ms = sf_clock_mono_ms() + timeout;
    if (g->join_deadline_ms)
        timer_at(g, sf_clock_mono_ms() + delay);
    else
        arm_timer(g);
    try_complete_join(g);
}

/* A member is gone (left, expired): the others rebalance without it. */
static void remove_member(sf_group_t *g, gmember_t *m, const char *why) {
    join_answer(m, SF_KERR_UNKNOWN_MEMBER_ID, NULL, 0);
    sync_answer(m, SF_KERR_UNKNOWN_MEMBER_ID);
    unlink_member(g, m);
    member_free(m);
    if (g->state == GS_STABLE || g->state == GS_COMPLETING)
        prepare_rebalance(g, why);
    else if (g->state == GS_PREPARING)
        try_complete_join(g);
}

static void session_cb(evutil_socket_t fd, short what, void *arg) {
    gmember_t *m = arg;
    sf_group_t *g = m->g;
    (void)fd;
    (void)what;
    if (m->join_cb || m->sync_cb) { /* waiting on the group, not on the client */
        touch(m);
        return;
    }
    sf_log(SF_LOG_INFO, "GROUP", "group %s: member %s session timed out", g->id, m->id);
    remove_member(g, m, "a member's session timed out");
    group_maybe_free(g);
}

static int set_protocols(gmember_t *m, const sf_gjoin_t *req) {
    sf_gprotocol_t *p = calloc((size_t)req->nprotocols + 1, sizeof(*p));
    int i;
    if (!p)
        return SF_ERR_NOMEM;
    for (i = 0; i < req->nprotocols; i++) {
        const sf_gprotocol_t *s = &req->protocols[i];
        uint8_t *meta = malloc(s->len + 1);
        p[i].name = dupstr(s->name ? s->name : "");
        if (meta && s->len)
            memcpy(meta, s->meta, s->len);
        p[i].meta = meta;
        p[i].len = s->len;
        if (!p[i].name || !meta) {
            protocols_free(p, i + 1);
            return SF_ERR_NOMEM;
        }
    }
    protocols_free(m->protocols, m->nprotocols);
    m->protocols = p;
    m->nprotocols = req->nprotocols;
    m->session_ms = req->session_ms;
    m->rebalance_ms = req->rebalance_ms;
    return SF_OK;
}

static int same_protocols(const gmember_t *m, const sf_gjoin_t *req) {
    int i;
    if (m->nprotocols != req->nprotocols)
        return 0;
    for (i = 0; i < m->nprotocols; i++)
        if (!same(m->protocols[i].name, req->protocols[i].name) ||
            m->protocols[i].len != req->protocols[i].len ||
            (m->protocols[i].len &&
             memcmp(m->protocols[i].meta, req->protocols[i].meta, m->protocols[i].len)))
            return 0;
    return 1;
}

static char *new_member_id(const char *client_id) {
    uint8_t u[16] = {0};
    size_t n = strlen(client_id) + 38;
    char *s = malloc(n);
    if (!s)
        return NULL;
    if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u)) {
        uint64_t t = (uint64_t)sf_clock_mono_us();
        memcpy(u, &t, sizeof(t));
    }
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
    snprintf(s, n,
             "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             client_id, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
             u[12], u[13], u[14], u[15]);
    return s;
}

static int group_set_type(sf_group_t *g, const char *type) {
    char *t = dupstr(type);
    if (!t)
        return SF_ERR_NOMEM;
    free(g->protocol_type);
    g->protocol_type = t;
    return SF_OK;
}

static void join_error(const sf_gjoin_t *req, int16_t err, const char *member_id,
                       sf_gjoin_cb cb, void *arg) {
    sf_gjoin_result_t r;
    memset(&r, 0, sizeof(r));
    r.error = err;
    r.generation = -1;
    r.leader = "";
    r.member_id = member_id ? member_id : req->member_id;
    cb(arg, &r);
}

static void add_member(sf_group_t *g, char *id, const sf_gjoin_t *req, sf_gjoin_cb cb,
                       void *arg) {
    gmember_t *m = calloc(1, sizeof(*m)), **pp;
    if (!m || set_protocols(m, req) != SF_OK ||
        !(m->session_timer = evtimer_new(g->c->base, session_cb, m)) ||
        (req->instance_id && !(m->instance_id = strdup(req->instance_id))) ||
        !(m->client_id = dupstr(req->client_id ? req->client_id : "")) ||
        !(m->client_host = dupstr(req->client_host ? req->client_host : "")) ||
        (!g->members && group_set_type(g, req->protocol_type) != SF_OK)) {
        if (m)
            member_free(m);
        join_error(req, SF_KERR_UNKNOWN_SERVER_ERROR, id, cb, arg);
        free(id);
        return;
    }
    m->g = g;
    m->id = id;
    m->join_cb = cb;
    m->join_arg = arg;
    for (pp = &g->members; *pp; pp = &(*pp)->next)
        ;
    *pp = m;
    g->nmembers++;
    if (!g->leader)
        g->leader = dupstr(id);
    g->initial_joined = 1;
    if (g->state == GS_PREPARING)
        try_complete_join(g);
    else
        prepare_rebalance(g, "a member joined");
}

int group_member_restore(sf_group_t *g, const char *id, const sf_gjoin_t *req, gmember_t **out) {
    gmember_t *m = calloc(1, sizeof(*m)), **pp;
    if (!m || !(m->id = strdup(id)) || set_protocols(m, req) != SF_OK ||
        !(m->session_timer = evtimer_new(g->c->base, session_cb, m)) ||
        (req->instance_id && !(m->instance_id = strdup(req->instance_id))) ||
        !(m->client_id = dupstr(req->client_id ? req->client_id : "")) ||
        !(m->client_host = dupstr(req->client_host ? req->client_host : ""))) {
        if (m)
            member_free(m);
        return SF_ERR_NOMEM;
    }
    m->g = g;
    for (pp = &g->members; *pp; pp = &(*pp)->next)
        ;
    *pp = m;
    g->nmembers++;
    touch(m);
    *out = m;
    return SF_OK;
}

/* Take @id (NULL: none) from the pending member ids, dropping those that expired. */
static int take_pending(sf_group_t *g, const char *id) {
    int64_t now = sf_clock_mono_ms();
    int i, found = 0;
    for (i = 0; i < g->npending;) {
        if (same(g->pending[i].id, id) || g->pending[i].expires_ms < now) {
            found |= same(g->pending[i].id, id);
            free(g->pending[i].id);
            g->pending[i] = g->pending[--g->npending];
        } else {
            i++;
        }
    }
    return found;
}

static void join_new(sf_group_t *g, const sf_gjoin_t *req, sf_gjoin_cb cb, void *arg) {
    struct gpending *v;
    char *id;
    take_pending(g, NULL);
    if (g->nmembers + g->npending >= g->c->cfg.max_size) {
        join_error(req, SF_KERR_GROUP_MAX_SIZE_REACHED, NULL, cb, arg);
        return;
    }
    if (!(id = new_member_id(req->client_id ? req->client_id : ""))) {
        join_error(req, SF_KERR_UNKNOWN_SERVER_ERROR, NULL, cb, arg);
        return;
    }
    if (!req->require_known_id) {
        add_member(g, id, req, cb, arg);
        return;
    }
    if (!(v = realloc(g->pending, (size_t)(g->npending + 1) * sizeof(*v)))) {
        free(id);
        join_error(req, SF_KERR_UNKNOWN_SERVER_ERROR, NULL, cb, arg);
        return;
    }
    g->pending = v;
    g->pending[g->npending].id = id;
    g->pending[g->npending++].expires_ms = sf_clock_mono_ms() + req->session_ms;
    if (!g->join_deadline_ms)
        arm_timer(g);
    join_error(req, SF_KERR_MEMBER_ID_REQUIRED, id, cb, arg);
}

/* A known member joins again: the current generation when nothing changed, else a rebalance
 * (a leader rejoining a stable group rebalances it, unless it is a static member taking its
 * place back: it then keeps the assignment and is told not to compute one, KIP-814). */
static void join_known(sf_group_t *g, gmember_t *m, const sf_gjoin_t *req, sf_gjoin_cb cb,
                       void *arg, int takeover) {
    int leader = same(m->id, g->leader);
    join_answer(m, SF_KERR_REBALANCE_IN_PROGRESS, NULL, 0); /* a join it sent before */
    if ((g->state == GS_COMPLETING || (g->state == GS_STABLE && (!leader || takeover))) &&
        same_protocols(m, req)) {
        m->join_cb = cb;
        m->join_arg = arg;
        m->skip_assignment = g->state == GS_STABLE && leader;
        touch(m);
        join_current(m);
        return;
    }
    if (set_protocols(m, req) != SF_OK) {
        join_error(req, SF_KERR_UNKNOWN_SERVER_ERROR, NULL, cb, arg);
        return;
    }
    m->join_cb = cb;
    m->join_arg = arg;
    if (g->state == GS_PREPARING)
        try_complete_join(g);
    else
        prepare_rebalance(g, "a member rejoined");
}

static gmember_t *static_member(const sf_group_t *g, const char *instance_id) {
    gmember_t *m;
    for (m = g->members; m && !same(m->instance_id, instance_id); m = m->next)
        ;
    return instance_id ? m : NULL;
}

int16_t group_fenced(const sf_group_t *g, const char *member_id, const char *instance_id) {
    const gmember_t *m = static_member(g, instance_id);
    return m && !same(m->id, member_id) ? SF_KERR_FENCED_INSTANCE_ID : SF_KERR_NONE;
}

/* KIP-345: a static member that comes back without its member id (a restarted process) takes
 * over its instance's membership under a new id, fencing the old one; its assignment stays,
 * so a rejoin with the same protocols causes no rebalance. */
static void join_static(sf_group_t *g, gmember_t *m, const sf_gjoin_t *req, sf_gjoin_cb cb,
                        void *arg) {
    char *id = new_member_id(req->client_id ? req->client_id : "");
    if (!id) {
        join_error(req, SF_KERR_UNKNOWN_SERVER_ERROR, NULL, cb, arg);
        return;
    }
    join_answer(m, SF_KERR_FENCED_INSTANCE_ID, NULL, 0);
    sync_answer(m, SF_KERR_FENCED_INSTANCE_ID);
    sf_log(SF_LOG_INFO, "GROUP", "group %s: static member %s rejoined as %s", g->id,
           m->instance_id, id);
    if (same(g->leader, m->id)) {
        free(g->leader);
        g->leader = dupstr(id);
    }
    free(m->id);
    m->id = id;
    join_known(g, m, req, cb, arg, 1);
    if (g->state == GS_STABLE) /* the new id must survive a coordinator failover */
        group_state_save(g);
}

void sf_group_join(sf_group_t *g, const sf_gjoin_t *req, sf_gjoin_cb cb, void *arg) {
    const sf_coord_config_t *cfg = &g->c->cfg;
    int known = req->member_id && *req->member_id;
    gmember_t *m, *sm = static_member(g, req->instance_id);
    char *id;
    if (req->session_ms < cfg->min_session_ms || req->session_ms > cfg->max_session_ms) {
        join_error(req, SF_KERR_INVALID_SESSION_TIMEOUT, NULL, cb, arg);
        return;
    }
    if (!protocols_fit(g, req)) {
        join_error(req, SF_KERR_INCONSISTENT_GROUP_PROTOCOL, NULL, cb, arg);
        return;
    }
    if (sm && !known) {
        join_static(g, sm, req, cb, arg);
        return;
    }
    if (sm && !same(sm->id, req->member_id)) {
        join_error(req, SF_KERR_FENCED_INSTANCE_ID, NULL, cb, arg);
        return;
    }
    if (!known) {
        sf_gjoin_t r = *req;
        r.require_known_id = r.require_known_id && !r.instance_id; /* static: known already */
        join_new(g, &r, cb, arg);
        return;
    }
    if (take_pending(g, req->member_id)) {
        if ((id = strdup(req->member_id)))
            add_member(g, id, req, cb, arg);
        else
            join_error(req, SF_KERR_UNKNOWN_SERVER_ERROR, NULL, cb, arg);
        return;
    }
    if (!(m = group_member(g, req->member_id))) {
        join_error(req, SF_KERR_UNKNOWN_MEMBER_ID, NULL, cb, arg);
        return;
    }
    join_known(g, m, req, cb, arg, 0);
}

/* ---- sync, heartbeat, leave ---- */

static int16_t check_member(const sf_group_t *g, const gmember_t *m, int32_t generation) {
    if (!m || g->state == GS_EMPTY || g->state == GS_DEAD)
        return SF_KERR_UNKNOWN_MEMBER_ID;
    if (generation != g->generation)
        return SF_KERR_ILLEGAL_GENERATION;
    return SF_KERR_NONE;
}

static int store_assignments(sf_group_t *g, const sf_gassignment_t *a, int n) {
    gmember_t *m;
    int i;
    for (m = g->members; m; m = m->next) {
        free(m->assignment);
        m->assignment = NULL;
        m->assignment_len = 0;
        for (i = 0; i < n; i++)
            if (same(a[i].member_id, m->id) && a[i].len) {
                if (!(m->assignment = malloc(a[i].len)))
                    return SF_ERR_NOMEM;
                memcpy(m->assignment, a[i].data, a[i].len);
                m->assignment_len = a[i].len;
            }
    }
    return SF_OK;
}

void sf_group_sync(sf_group_t *g, const char *member_id, const char *instance_id,
                   int32_t generation, const char *protocol_type, const char *protocol_name,
                   const sf_gassignment_t *assignments, int n, sf_gsync_cb cb, void *arg) {
    gmember_t *m = group_member(g, member_id), *o;
    int16_t err = group_fenced(g, member_id, instance_id);
    if (!err)
        err = check_member(g, m, generation);
    if (!err && ((protocol_type && !same(protocol_type, g->protocol_type)) ||
                 (protocol_name && !same(protocol_name, g->protocol_name))))
        err = SF_KERR_INCONSISTENT_GROUP_PROTOCOL;
    if (!err && g->state == GS_PREPARING)
        err = SF_KERR_REBALANCE_IN_PROGRESS;
    if (err) {
        cb(arg, err, NULL, NULL, NULL, 0);
        return;
    }
    sync_answer(m, SF_KERR_REBALANCE_IN_PROGRESS); /* a sync it sent before */
    m->sync_cb = cb;
    m->sync_arg = arg;
    touch(m);
    if (g->state == GS_STABLE) {
        sync_answer(m, SF_KERR_NONE);
        return;
    }
    if (!same(m->id, g->leader))
        return; /* waits for the leader's assignment */
    if (store_assignments(g, assignments, n) != SF_OK) {
        prepare_rebalance(g, "no memory for the assignment");
        return;
    }
    g->state = GS_STABLE;
    sf_log(SF_LOG_INFO, "GROUP", "group %s: generation %d is stable", g->id, g->generation);
    group_state_save(g);
    for (o = g->members; o; o = o->next)
        sync_answer(o, SF_KERR_NONE);
}

int16_t sf_group_heartbeat(sf_group_t *g, const char *member_id, const char *instance_id,
                           int32_t generation) {
    gmember_t *m = group_member(g, member_id);
    int16_t err = group_fenced(g, member_id, instance_id);
    if (!err)
        err = check_member(g, m, generation);
    if (err)
        return err;
    touch(m);
    return g->state == GS_PREPARING ? SF_KERR_REBALANCE_IN_PROGRESS : SF_KERR_NONE;
}

int16_t sf_group_leave(sf_group_t *g, const char *member_id, const char *instance_id) {
    gmember_t *m = instance_id ? static_member(g, instance_id) : group_member(g, member_id);
    if (!m)
        return SF_KERR_UNKNOWN_MEMBER_ID;
    if (instance_id && member_id && *member_id && !same(m->id, member_id))
        return SF_KERR_FENCED_INSTANCE_ID;
    sf_log(SF_LOG_INFO, "GROUP", "group %s: member %s left", g->id, m->id);
    remove_member(g, m, "a member left");
    return SF_KERR_NONE;
}

void group_members_drop(sf_group_t *g, int16_t err) {
    gmember_t *m;
    evtimer_del(g->join_timer);
    while ((m = g->members) != NULL) {
        join_answer(m, err, NULL, 0);
        sync_answer(m, err);
        g->members = m->next;
        member_free(m);
    }
    g->nmembers = 0;
    pending_clear(g);
    g->state = GS_DEAD;
}

