/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One UCP endpoint per peer, created from the peer's worker address with
 * UCP_ERR_HANDLING_MODE_PEER, and the source of this backend's failure
 * reports.
 *
 * The error callback runs inside ucp_worker_progress(): it only marks the
 * peer lost. The endpoint is force-closed (UCP_EP_CLOSE_FLAG_FORCE: no
 * flush towards a dead peer, in-flight sends complete with an error) on
 * the next pass, outside any callback, and the report reaches the core
 * after the grace period, once the worker has been drained.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucs/debug/log_def.h>

#include "ucx_internal.h"

static void ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    ftc_ucx_peer_t *p = arg;
    ftc_ucx_t *u = p->u;
    u->stats.ep_errors++;
    if (p->ep != ep || p->state != FTC_UCX_PEER_UP)
        return;     /* an endpoint we already gave up on */
    snprintf(p->error, sizeof(p->error), "%s", ucs_status_string(status));
    p->detected_ns = ftc_bk_now_ns();
    ftc_ucx_peer_lost(u, p->rank,
                      (uint64_t)u->cfg.failure_grace_ms * 1000000u, p->error);
}

void ftc_ucx_ep_transport(ucp_ep_h ep, char *out, size_t outlen)
{
    /* UCX 1.13 has no query for an endpoint's lanes; its debug print
     * has them:  "lane[0]:  0:tcp/lo.0 md[0] -> ... am am_bw#0 ..." */
    out[0] = '\0';
    char *text = NULL;
    size_t textlen = 0;
    FILE *f = open_memstream(&text, &textlen);
    if (f == NULL)
        return;
    ucp_ep_print_info(ep, f);
    fclose(f);
    for (char *line = text; line != NULL && *line != '\0';) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        char *lane = strstr(line, "lane[");
        if (lane != NULL && strstr(line, " am ") != NULL) {
            char *tl = strchr(lane, ':');      /* after "lane[0]" */
            if (tl != NULL)
                tl = strchr(tl + 1, ':');      /* after the resource index */
            if (tl != NULL) {
                tl++;
                size_t n = strcspn(tl, " \t");
                /* drop the ".0" path suffix of "tcp/lo.0" */
                char *dot = memchr(tl, '.', n);
                if (dot != NULL)
                    n = (size_t)(dot - tl);
                if (n >= outlen)
                    n = outlen - 1;
                memcpy(out, tl, n);
                out[n] = '\0';
                break;
            }
        }
        line = nl != NULL ? nl + 1 : NULL;
    }
    free(text);
}

/*
 * Why ucp_ep_create said "unreachable". UCX answers UCS_ERR_UNREACHABLE
 * for two different things:
 *   - wire-up found no transport of ours that can reach the peer's
 *     address (UCX_TLS or UCX_NET_DEVICES leave none, shared memory to
 *     another host): a configuration error, the same for every attempt;
 *   - a transport was chosen but its connection was refused: over tcp
 *     on one host connect() fails at once with ECONNREFUSED when the
 *     peer's process is gone (it died after it published its address).
 *     That is a failure like any other.
 * Only UCX's log tells them apart: lane selection (wireup/select.c) logs
 * "no <what> transport to <peer>: ..." before it gives up, a refused
 * connect logs from the transport (sock.c: "connect(...) failed").
 * While ucp_ep_create runs, a log handler of ours notes which it was
 * and passes the message on unchanged. If UCX logs nothing (UCX_LOG_LEVEL
 * below error), the failure counts as the peer's: the rule of the issue
 * this fixes is that an unreachable peer after the exchange must never
 * take the job down; the log line still names both causes.
 */
static _Thread_local bool *no_lane_seen;

static ucs_log_func_rc_t ep_create_log(const char *file, unsigned line,
                                       const char *function,
                                       ucs_log_level_t level,
                                       const ucs_log_component_config_t *cc,
                                       const char *message, va_list ap)
{
    (void)line; (void)function; (void)cc; (void)ap;
    if (no_lane_seen != NULL && level <= UCS_LOG_LEVEL_ERROR
        && ((file != NULL && strstr(file, "select.c") != NULL)
            || (message != NULL && strstr(message, " transport to ") != NULL)))
        *no_lane_seen = true;
    return UCS_LOG_FUNC_RC_CONTINUE;
}

int ftc_ucx_peer_connect(ftc_ucx_t *u, uint32_t r, bool *setup_error)
{
    ftc_ucx_peer_t *p = &u->peers[r];
    if (setup_error != NULL)
        *setup_error = false;
    if (p->ep != NULL)
        return UCS_OK;
    if (p->state != FTC_UCX_PEER_IDLE)
        return UCS_ERR_CANCELED;    /* lost or failed: never again */
    if (p->addr == NULL) {
        ftc_ucx_logf(u, "rank %u: no address for peer %u (set_peers?)",
                     u->cfg.rank, r);
        if (setup_error != NULL)
            *setup_error = true;
        return UCS_ERR_INVALID_PARAM;
    }
    ucp_ep_params_t ep;
    memset(&ep, 0, sizeof(ep));
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                    | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                    | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = p->addr;
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = ep_err_cb;
    ep.err_handler.arg = p;
    bool no_lane = false;
    no_lane_seen = &no_lane;
    ucs_log_push_handler(ep_create_log);
    ucs_status_t st = ucp_ep_create(u->worker, &ep, &p->ep);
    ucs_log_pop_handler();
    no_lane_seen = NULL;
    if (st == UCS_OK) {
        p->state = FTC_UCX_PEER_UP;
        u->stats.eps_created++;
        ftc_ucx_ep_transport(p->ep, p->transport, sizeof(p->transport));
        /* posix, sysv, xpmem: "<name>/memory" (progress.c says why the
         * fast path wants shared memory to every peer). */
        p->shm = strstr(p->transport, "/memory") != NULL;
        if (p->shm)
            u->peers_not_shm--;
        return UCS_OK;
    }
    p->ep = NULL;
    /* Ours (the configuration, memory) or the peer's (it is gone)? */
    bool ours = (st == UCS_ERR_UNREACHABLE && no_lane)
                || st == UCS_ERR_UNSUPPORTED || st == UCS_ERR_INVALID_PARAM
                || st == UCS_ERR_NO_MEMORY;
    if (setup_error != NULL)
        *setup_error = ours;
    char why[512];
    if (ours && st == UCS_ERR_UNREACHABLE)
        ftc_ucx_explain_unreachable(u, why, sizeof(why));
    else if (ours)
        snprintf(why, sizeof(why), "UCX_TLS=%s",
                 getenv("UCX_TLS") != NULL ? getenv("UCX_TLS") : "all");
    else
        snprintf(why, sizeof(why),
                 "It published its address but takes no connection: its "
                 "process is gone (were it alive, its UCX_NET_DEVICES would "
                 "be an interface this host cannot reach, e.g. lo on a "
                 "multi-host job). Reported as failed");
    if (!ours || !u->diag_logged || st != UCS_ERR_UNREACHABLE)
        ftc_ucx_logf(u, "rank %u: cannot create an endpoint to rank %u: "
                        "%s. %s", u->cfg.rank, r, ucs_status_string(st), why);
    if (ours)
        u->diag_logged = true;
    return st;
}

void ftc_ucx_peer_lost(ftc_ucx_t *u, uint32_t r, uint64_t delay_ns,
                       const char *why)
{
    ftc_ucx_peer_t *p = &u->peers[r];
    if (p->state == FTC_UCX_PEER_LOST || p->state == FTC_UCX_PEER_FAILED)
        return;
    if (why != p->error)
        snprintf(p->error, sizeof(p->error), "%s", why);
    if (p->detected_ns == 0)
        p->detected_ns = ftc_bk_now_ns();
    if (!u->closing_down)
        ftc_ucx_logf(u, "rank %u: peer %u (%s): %s", u->cfg.rank, r,
                     p->transport[0] != '\0' ? p->transport : "no endpoint",
                     p->error);
    p->state = FTC_UCX_PEER_LOST;
    p->close_pending = p->ep != NULL;
    ftc_bk_grace_add(&u->lost, r, p->detected_ns + delay_ns);
    if (u->fd_armed)
        ftc_ucx_kick(u);
}

static void closing_add(ftc_ucx_t *u, void *req)
{
    if (u->nclosing == u->capclosing) {
        size_t cap = u->capclosing != 0 ? 2 * u->capclosing : 16;
        void **n = realloc(u->closing, cap * sizeof(*n));
        if (n == NULL) {
            /* Cannot track it: let UCX finish it on its own. */
            ucp_request_free(req);
            return;
        }
        u->closing = n;
        u->capclosing = cap;
    }
    u->closing[u->nclosing++] = req;
}

static void close_ep(ftc_ucx_t *u, ftc_ucx_peer_t *p)
{
    ucp_ep_h ep = p->ep;
    p->ep = NULL;
    p->close_pending = false;
    if (ep == NULL)
        return;
    if (p->shm) {
        p->shm = false;
        u->peers_not_shm++;
    }
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof(prm));
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &prm);
    if (UCS_PTR_IS_PTR(req))
        closing_add(u, req);
}

int ftc_ucx_close_pending(ftc_ucx_t *u)
{
    int n = 0;
    for (uint32_t i = 0; i < u->lost.count; i++) {
        ftc_ucx_peer_t *p = &u->peers[u->lost.ranks[i]];
        if (p->close_pending) {
            close_ep(u, p);
            n++;
        }
    }
    return n;
}

void ftc_ucx_close_all(ftc_ucx_t *u)
{
    for (uint32_t r = 0; r < u->cfg.nranks; r++)
        if (u->peers[r].ep != NULL)
            close_ep(u, &u->peers[r]);
}

size_t ftc_ucx_reap_closing(ftc_ucx_t *u)
{
    for (size_t i = 0; i < u->nclosing;) {
        if (ucp_request_check_status(u->closing[i]) != UCS_INPROGRESS) {
            ucp_request_free(u->closing[i]);
            u->closing[i] = u->closing[--u->nclosing];
        } else {
            i++;
        }
    }
    return u->nclosing;
}
