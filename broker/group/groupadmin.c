/* Listing, describing and deleting groups, and deleting committed offsets (group.h), as
 * Kafka's ListGroups, DescribeGroups, DeleteGroups and OffsetDelete see them. */
#include "group_int.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"

static int group_exists(const sf_group_t *g) {
    return g->state != GS_EMPTY || group_has_members(g) || g->noffsets > 0;
}

const char *sf_group_state(const sf_group_t *g) {
    static const char *const names[] = {"Empty", "PreparingRebalance", "CompletingRebalance",
                                        "Stable", "Dead"};
    return group_exists(g) ? names[g->state] : "Dead";
}

/* ---- ListGroups ---- */

/* A listing of /consumers in flight; the coordinator forgets it (c NULL) when it closes. */
struct glist {
    struct glist *next;
    sf_coord_t *c;
    sf_glist_cb cb;
    void *arg;
};

void coord_lists_abandon(sf_coord_t *c) {
    struct glist *l;
    while ((l = c->lists) != NULL) {
        c->lists = l->next;
        l->c = NULL;
        if (l->cb)
            l->cb(l->arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL, 0);
    }
}

static void list_unlink(struct glist *l) {
    struct glist **pp;
    for (pp = &l->c->lists; *pp && *pp != l; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = l->next;
}

static int add_listing(sf_glisting_t **v, int *n, int *cap, const char *id, const char *type,
                       const char *state) {
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        sf_glisting_t *nv = realloc(*v, (size_t)nc * sizeof(*nv));
        if (!nv)
            return SF_ERR_NOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[*n].id = id;
    (*v)[*n].protocol_type = type ? type : "";
    (*v)[*n].state = state;
    (*n)++;
    return SF_OK;
}

static void listed_cb(void *arg, int err, char *const *ids, int nids) {
    struct glist *l = arg;
    sf_coord_t *c = l->c;
    sf_glisting_t *v = NULL;
    int i, n = 0, cap = 0, rc = SF_OK;
    size_t s;
    if (!c) { /* the coordinator closed (and answered) meanwhile */
        free(l);
        return;
    }
    list_unlink(l);
    if (!l->cb) { /* the retention pass */
        coord_expire(c, err == SF_OK ? ids : NULL, err == SF_OK ? nids : 0);
        free(l);
        return;
    }
    for (s = 0; err == SF_OK && rc == SF_OK && s < c->ntable; s++) {
        const sf_group_t *g;
        for (g = c->table[s]; g && rc == SF_OK; g = g->hnext)
            if (g->loaded && group_exists(g))
                rc = add_listing(&v, &n, &cap, g->id, g->protocol_type, sf_group_state(g));
    }
    for (i = 0; err == SF_OK && rc == SF_OK && i < nids; i++) {
        int b = sf_coord_bucket_of(ids[i], strlen(ids[i]), c->nbuckets);
        const sf_group_t *g = coord_find(c, ids[i]);
        if (coord_owns(c, b, -1) && (!g || !g->loaded))
            rc = add_listing(&v, &n, &cap, ids[i], "", "Empty");
    }
    l->cb(l->arg, err == SF_OK && rc == SF_OK ? SF_KERR_NONE : SF_KERR_COORDINATOR_NOT_AVAILABLE,
          v, err == SF_OK && rc == SF_OK ? n : 0);
    free(v);
    free(l);
}

/* List /consumers for @cb, or for the retention pass (@cb NULL). */
int coord_list_start(sf_coord_t *c, sf_glist_cb cb, void *arg) {
    struct glist *l = malloc(sizeof(*l));
    if (!l || c->closing) {
        free(l);
        return SF_ERR_STATE;
    }
    l->c = c;
    l->cb = cb;
    l->arg = arg;
    if (sf_cluster_groups_list(c->cl, listed_cb, l) != SF_OK) {
        free(l);
        return SF_ERR_IO;
    }
    l->next = c->lists;
    c->lists = l;
    return SF_OK;
}

void sf_coord_list(sf_coord_t *c, sf_glist_cb cb, void *arg) {
    if (coord_list_start(c, cb, arg) != SF_OK)
        cb(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL, 0);
}

/* ---- DescribeGroups ---- */

int sf_group_describe(const sf_group_t *g, void (*fn)(void *arg, const sf_gdescription_t *d),
                      void *arg) {
    sf_gdescribed_member_t *v = calloc((size_t)g->nmembers + 1, sizeof(*v));
    sf_gdescription_t d;
    const gmember_t *m;
    int i, n = 0;
    if (!v)
        return SF_ERR_NOMEM;
    for (m = g->members; m; m = m->next, n++) {
        v[n].member_id = m->id;
        v[n].instance_id = m->instance_id;
        v[n].client_id = m->client_id;
        v[n].client_host = m->client_host;
        v[n].assignment = m->assignment;
        v[n].assignment_len = m->assignment_len;
        for (i = 0; i < m->nprotocols; i++)
            if (g->protocol_name && !strcmp(m->protocols[i].name, g->protocol_name)) {
                v[n].meta = m->protocols[i].meta;
                v[n].meta_len = m->protocols[i].len;
            }
    }
    d.state = sf_group_state(g);
    d.protocol_type = g->protocol_type && group_exists(g) ? g->protocol_type : "";
    d.protocol = g->protocol_name ? g->protocol_name : "";
    d.members = v;
    d.nmembers = n;
    fn(arg, &d);
    free(v);
    return SF_OK;
}

/* ---- DeleteGroups and OffsetDelete ---- */

struct gdel {
    struct gdel *next;
    sf_group_t *g;
    sf_cluster_offset_t *w; /* the offsets deleted (topics owned) */
    int n, whole;
    sf_gdone_cb done;
    void *arg;
};

void group_deletes_abandon(sf_group_t *g) {
    struct gdel *d;
    for (d = g->deletes; d; d = d->next) {
        sf_gdone_cb done = d->done;
        d->done = NULL;
        if (done)
            done(d->arg, SF_KERR_COORDINATOR_NOT_AVAILABLE);
    }
}

static void deleted_cb(void *arg, int err) {
    struct gdel *d = arg, **pp;
    sf_group_t *g = d->g;
    int i;
    for (pp = &g->deletes; *pp && *pp != d; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = d->next;
    if (err == SF_OK && !g->dropped) {
        group_offsets_forget(g, d->w, d->n);
        if (d->whole)
            sf_log(SF_LOG_INFO, "GROUP", "group %s deleted", g->id);
    }
    g->busy--;
    if (d->done)
        d->done(d->arg, err == SF_OK        ? SF_KERR_NONE
                        : err == SF_ERR_STATE ? SF_KERR_NOT_COORDINATOR
                                              : SF_KERR_COORDINATOR_NOT_AVAILABLE);
    for (i = 0; i < d->n; i++)
        free((char *)d->w[i].topic);
    free(d->w);
    free(d);
    group_maybe_free(g);
}

/* Delete @v's offsets (those with skip[i] == 0; @skip may be NULL) from ZooKeeper, then from
 * memory; with @whole, the group's znodes too. */
void group_offsets_delete(sf_group_t *g, const sf_goffset_t *v, int n, const int16_t *skip,
                       int whole, sf_gdone_cb done, void *arg) {
    struct gdel *d = calloc(1, sizeof(*d));
    int i;
    if (!d || !(d->w = calloc((size_t)n + 1, sizeof(*d->w)))) {
        free(d);
        done(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    d->g = g;
    d->whole = whole;
    d->done = done;
    d->arg = arg;
    d->next = g->deletes;
    g->deletes = d;
    g->busy++;
    for (i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        if (!(d->w[d->n].topic = strdup(v[i].topic))) {
            deleted_cb(d, SF_ERR_NOMEM);
            return;
        }
        d->w[d->n++].partition = v[i].partition;
    }
    if (sf_cluster_offsets_delete(g->c->cl, g->id, g->bucket, g->epoch, d->w, d->n, whole,
                                  deleted_cb, d) != SF_OK)
        deleted_cb(d, SF_ERR_IO);
}

static void collect(void *arg, const sf_goffset_t *o) {
    sf_goffset_t **p = arg;
    *(*p)++ = *o;
}

void sf_group_delete(sf_group_t *g, sf_gdone_cb done, void *arg) {
    sf_goffset_t *v, *p;
    if (group_has_members(g)) {
        done(arg, SF_KERR_NON_EMPTY_GROUP);
        return;
    }
    if (!group_exists(g)) {
        done(arg, SF_KERR_GROUP_ID_NOT_FOUND);
        return;
    }
    if (!(v = p = calloc((size_t)g->noffsets + 1, sizeof(*v)))) {
        done(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    sf_group_offsets(g, collect, &p);
    group_offsets_delete(g, v, g->noffsets, NULL, 1, done, arg);
    free(v);
}

/* Whether a member of a "consumer" group subscribes to @topic, as Kafka's isSubscribedToTopic:
 * from their ConsumerProtocolSubscription (int16 version, then an array of int16-length
 * strings); a member whose subscription cannot be read counts as subscribing to everything. */
static int subscribes(const sf_group_t *g, const char *topic) {
    const gmember_t *m;
    size_t tl = strlen(topic);
    for (m = g->members; m; m = m->next) {
        const uint8_t *p = NULL, *end = NULL;
        int32_t count, i;
        for (i = 0; i < m->nprotocols; i++)
            if (g->protocol_name && !strcmp(m->protocols[i].name, g->protocol_name))
                p = m->protocols[i].meta, end = p + m->protocols[i].len;
        if (!p || end - p < 6)
            return 1;
        count = (int32_t)((uint32_t)p[2] << 24 | (uint32_t)p[3] << 16 | (uint32_t)p[4] << 8 | p[5]);
        if (count < 0)
            return 1;
        for (p += 6, i = 0; i < count; i++) {
            size_t len;
            if (end - p < 2 || (size_t)(end - p - 2) < (len = (size_t)(p[0] << 8 | p[1])))
                return 1; /* cut short */
            if (len == tl && !memcmp(p + 2, topic, len))
                return 1;
            p += 2 + len;
        }
    }
    return 0;
}

void sf_group_delete_offsets(sf_group_t *g, const sf_goffset_t *v, int n, int16_t *errs,
                             sf_gdone_cb done, void *arg) {
    int i;
    if (!group_exists(g)) {
        done(arg, SF_KERR_GROUP_ID_NOT_FOUND);
        return;
    }
    if (g->members && (!g->protocol_type || strcmp(g->protocol_type, "consumer"))) {
        done(arg, SF_KERR_NON_EMPTY_GROUP); /* its subscriptions cannot be known */
        return;
    }
    for (i = 0; i < n; i++)
        errs[i] = subscribes(g, v[i].topic) ? SF_KERR_GROUP_SUBSCRIBED_TO_TOPIC : SF_KERR_NONE;
    group_offsets_delete(g, v, n, errs, 0, done, arg);
}
