/* SPDX-License-Identifier: BSD-3-Clause */
#include "ofi_rdm_endpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

static struct fi_info *hints(const ofi_rdm_spec_t *s)
{
    struct fi_info *h = fi_allocinfo();
    if (h == NULL)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_MSG | FI_SEND | FI_RECV;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->addr_format = s->addr_format;
    h->domain_attr->av_type = FI_AV_TABLE;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED
                              | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    if (s->provider != NULL) {
        h->fabric_attr->prov_name = strdup(s->provider);
        if (h->fabric_attr->prov_name == NULL) {
            fi_freeinfo(h);
            return NULL;
        }
    }
    return h;
}

static int register_buf(ofi_rdm_t *r, const ofi_rdm_spec_t *s,
                        const char **step)
{
    *step = "fi_mr_reg";
    int rc = fi_mr_reg(r->domain, s->buf, s->len, s->access, 0, 0, 0, &r->mr,
                       NULL);
    if (rc == 0 && (r->info->domain_attr->mr_mode & FI_MR_ENDPOINT)) {
        *step = "fi_mr_bind";
        rc = fi_mr_bind(r->mr, &r->ep->fid, 0);
        if (rc == 0) {
            *step = "fi_mr_enable";
            rc = fi_mr_enable(r->mr);
        }
    }
    if (rc == 0)
        r->desc = fi_mr_desc(r->mr);
    return rc;
}

int ofi_rdm_addr_format(const ofi_rdm_spec_t *s, uint32_t *fmt)
{
    struct fi_info *h = hints(s), *info = NULL;
    if (h == NULL)
        return -FI_ENOMEM;
    int rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
                        s->node, NULL, s->node != NULL ? FI_SOURCE : 0, h,
                        &info);
    fi_freeinfo(h);
    if (rc == 0) {
        *fmt = info->addr_format;
        fi_freeinfo(info);
    }
    return rc;
}

int ofi_rdm_open(ofi_rdm_t *r, const ofi_rdm_spec_t *s, char *err,
                 size_t errlen)
{
    const char *step = "fi_allocinfo";
    struct fi_info *h = hints(s);
    int rc = -FI_ENOMEM;
    if (h != NULL) {
        step = "fi_getinfo";
        rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
                        s->node, NULL, s->node != NULL ? FI_SOURCE : 0, h,
                        &r->info);
        fi_freeinfo(h);
        if (rc != 0)
            r->info = NULL;
    }
    if (rc == 0) {
        step = "fi_fabric";
        rc = fi_fabric(r->info->fabric_attr, &r->fabric, NULL);
    }
    if (rc == 0) {
        step = "fi_domain";
        rc = fi_domain(r->fabric, r->info, &r->domain, NULL);
    }
    if (rc == 0) {
        struct fi_av_attr aa;
        memset(&aa, 0, sizeof(aa));
        aa.type = FI_AV_TABLE;
        aa.count = s->av_count;
        step = "fi_av_open";
        rc = fi_av_open(r->domain, &aa, &r->av, NULL);
    }
    if (rc == 0) {
        struct fi_cq_attr ca;
        memset(&ca, 0, sizeof(ca));
        ca.format = FI_CQ_FORMAT_CONTEXT;
        ca.wait_obj = FI_WAIT_NONE;
        ca.size = s->cq_size;
        step = "fi_cq_open";
        rc = fi_cq_open(r->domain, &ca, &r->cq, NULL);
    }
    if (rc == 0) {
        step = "fi_endpoint";
        rc = fi_endpoint(r->domain, r->info, &r->ep, NULL);
    }
    if (rc == 0) {
        step = "fi_ep_bind";
        rc = fi_ep_bind(r->ep, &r->av->fid, 0);
        if (rc == 0)
            rc = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
    }
    if (rc == 0) {
        step = "fi_enable";
        rc = fi_enable(r->ep);
    }
    if (rc == 0 && s->buf != NULL
        && (r->info->domain_attr->mr_mode & FI_MR_LOCAL))
        rc = register_buf(r, s, &step);
    if (rc != 0)
        snprintf(err, errlen, "%s: %s", step, fi_strerror(-rc));
    return rc;
}

/* Endpoint first: it holds the others. */
void ofi_rdm_close(ofi_rdm_t *r)
{
    if (r->ep != NULL)
        fi_close(&r->ep->fid);
    if (r->mr != NULL)
        fi_close(&r->mr->fid);
    if (r->av != NULL)
        fi_close(&r->av->fid);
    if (r->cq != NULL)
        fi_close(&r->cq->fid);
    if (r->domain != NULL)
        fi_close(&r->domain->fid);
    if (r->fabric != NULL)
        fi_close(&r->fabric->fid);
    if (r->info != NULL)
        fi_freeinfo(r->info);
    memset(r, 0, sizeof(*r));
}
