/* A group's generation and members in ZooKeeper (/consumers/<group>/group, cluster.h), written
 * whenever the group becomes Stable or Empty, so that the coordinator that takes its bucket
 * over goes on with the same generation, members and assignments: the members' heartbeats and
 * commits keep working across a coordinator failover, as they do in Kafka.
 *
 *   {"version":1,"generation":3,"protocol_type":"consumer","protocol":"range","leader":"m-1",
 *    "members":[{"member_id":..,"instance_id":null,"client_id":..,"client_host":..,
 *                "session_timeout_ms":..,"rebalance_timeout_ms":..,
 *                "metadata":"<base64>","assignment":"<base64>"}]}
 *
 * Writes are serialised per group (one in flight, the newest state written next) and checked
 * against the bucket's epoch. */
#include "group_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "err.h"
#include "logging.h"

static json_t *b64(const uint8_t *p, size_t n) {
    char *s = sf_base64_encode(p, n);
    json_t *j = s ? json_string(s) : NULL;
    free(s);
    return j;
}

/* Decode base64 @s into a malloc'd buffer (@len); NULL on bad input. */
static uint8_t *unb64(const char *s, size_t *len) {
    return sf_base64_decode(s, strlen(s), len);
}

static json_t *nstr(const char *s) {
    return s ? json_string(s) : json_null();
}

static json_t *member_json(const sf_group_t *g, const gmember_t *m) {
    json_t *o = json_object();
    const uint8_t *meta = (const uint8_t *)"";
    size_t len = 0;
    int i, bad = !o;
    for (i = 0; i < m->nprotocols; i++)
        if (g->protocol_name && !strcmp(m->protocols[i].name, g->protocol_name)) {
            meta = m->protocols[i].meta;
            len = m->protocols[i].len;
        }
    bad = bad || json_object_set_new(o, "member_id", json_string(m->id)) ||
          json_object_set_new(o, "instance_id", nstr(m->instance_id)) ||
          json_object_set_new(o, "client_id", json_string(m->client_id)) ||
          json_object_set_new(o, "client_host", json_string(m->client_host)) ||
          json_object_set_new(o, "session_timeout_ms", json_integer(m->session_ms)) ||
          json_object_set_new(o, "rebalance_timeout_ms", json_integer(m->rebalance_ms)) ||
          json_object_set_new(o, "metadata", b64(meta, len)) ||
          json_object_set_new(o, "assignment", b64(m->assignment ? m->assignment
                                                                 : (const uint8_t *)"",
                                                   m->assignment_len));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static char *state_encode(const sf_group_t *g) {
    json_t *o = json_object(), *a = json_array();
    const gmember_t *m;
    char *s = NULL;
    int bad = !o || !a;
    for (m = g->members; !bad && m; m = m->next)
        bad = json_array_append_new(a, member_json(g, m));
    bad = bad || json_object_set_new(o, "version", json_integer(1)) ||
          json_object_set_new(o, "generation", json_integer(g->generation)) ||
          json_object_set_new(o, "protocol_type", nstr(g->protocol_type)) ||
          json_object_set_new(o, "protocol", nstr(g->protocol_name)) ||
          json_object_set_new(o, "leader", nstr(g->leader)) ||
          json_object_set_new(o, "members", json_incref(a));
    if (!bad)
        s = json_dumps(o, JSON_COMPACT);
    json_decref(a);
    json_decref(o);
    return s;
}

static void save_done(void *arg, int err);

void group_state_save(sf_group_t *g) {
    char *data;
    int rc;
    if (!g->c->cl || g->dropped)
        return;
    if (g->saving) {
        g->save_again = 1;
        return;
    }
    if (!(data = state_encode(g))) {
        sf_log(SF_LOG_WARNING, "GROUP", "group %s: no memory to save its state", g->id);
        return;
    }
    g->saving = 1;
    g->save_again = 0;
    g->busy++;
    rc = sf_cluster_group_state_write(g->c->cl, g->id, g->bucket, g->epoch, data, save_done, g);
    free(data);
    if (rc != SF_OK) {
        if (rc == SF_ERR_TOOLARGE)
            sf_log(SF_LOG_WARNING, "GROUP", "group %s: its state is too large for ZooKeeper; a "
                   "new coordinator will rebalance it", g->id);
        g->saving = 0;
        g->busy--;
    }
}

static void save_done(void *arg, int err) {
    sf_group_t *g = arg;
    g->saving = 0;
    g->busy--;
    if (err != SF_OK && !g->dropped)
        sf_log(SF_LOG_WARNING, "GROUP", "group %s: saving its state failed: %s", g->id,
               sf_err_str(err));
    if (g->save_again && err != SF_ERR_STATE)
        group_state_save(g);
    group_maybe_free(g);
}

/* ---- restoring ---- */

static const char *jstr(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int32_t jint(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= INT32_MAX
               ? (int32_t)json_integer_value(v)
               : -1;
}

static int restore_member(sf_group_t *g, json_t *o) {
    const char *id = jstr(o, "member_id"), *meta = jstr(o, "metadata");
    const char *asg = jstr(o, "assignment");
    sf_gjoin_t j;
    sf_gprotocol_t proto;
    gmember_t *m;
    size_t mlen = 0, alen = 0;
    uint8_t *mb, *ab;
    int rc;
    if (!id || !meta || !asg || !g->protocol_name || !(mb = unb64(meta, &mlen)))
        return SF_ERR_MALFORMED;
    if (!(ab = unb64(asg, &alen))) {
        free(mb);
        return SF_ERR_MALFORMED;
    }
    memset(&j, 0, sizeof(j));
    proto.name = g->protocol_name;
    proto.meta = mb;
    proto.len = mlen;
    j.instance_id = jstr(o, "instance_id");
    j.client_id = jstr(o, "client_id");
    j.client_host = jstr(o, "client_host");
    j.session_ms = jint(o, "session_timeout_ms");
    j.rebalance_ms = jint(o, "rebalance_timeout_ms");
    j.protocol_type = g->protocol_type;
    j.protocols = &proto;
    j.nprotocols = 1;
    rc = j.session_ms > 0 && j.rebalance_ms > 0 ? group_member_restore(g, id, &j, &m)
                                                : SF_ERR_MALFORMED;
    free(mb);
    if (rc == SF_OK) {
        m->assignment = ab;
        m->assignment_len = alen;
    } else {
        free(ab);
    }
    return rc;
}

int group_state_restore(sf_group_t *g, const char *data) {
    json_t *o = json_loads(data, 0, NULL), *a = json_object_get(o, "members"), *e;
    const char *type = jstr(o, "protocol_type"), *proto = jstr(o, "protocol");
    const char *leader = jstr(o, "leader");
    size_t i;
    int rc = SF_OK;
    if (!o || jint(o, "generation") < 0 || !json_is_array(a)) {
        json_decref(o);
        return SF_ERR_MALFORMED;
    }
    g->generation = jint(o, "generation");
    if ((type && !(g->protocol_type = strdup(type))) ||
        (proto && !(g->protocol_name = strdup(proto))) ||
        (leader && !(g->leader = strdup(leader))))
        rc = SF_ERR_NOMEM;
    json_array_foreach(a, i, e) {
        if (rc == SF_OK)
            rc = restore_member(g, e);
    }
    json_decref(o);
    if (rc != SF_OK) {
        group_members_drop(g, SF_KERR_UNKNOWN_MEMBER_ID);
        g->state = GS_EMPTY;
        return rc;
    }
    g->state = g->members ? GS_STABLE : GS_EMPTY;
    return SF_OK;
}
