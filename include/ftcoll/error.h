/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error codes. Every ftcoll function that can fail returns FTC_OK (0) or one
 * of these negative codes (libuv convention); ftc_strerror() names them.
 */
#ifndef FTCOLL_ERROR_H
#define FTCOLL_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ftc_error {
    FTC_OK = 0,
    /* Usage errors, returned synchronously by the call that was misused. */
    FTC_EINVAL = -1,        /* an argument is NULL, zero, or out of range */
    FTC_ENOMEM = -2,        /* an allocation failed */
    FTC_EOVERFLOW = -3,     /* count x element size does not fit the wire */
    FTC_EMISMATCH = -4,     /* operation undefined for the datatype, or peers
                               called the collective with other arguments */
    FTC_ENOTSUP = -5,       /* valid request this build cannot honour */
    /* Outcomes of a collective, reported through its deliver callback. */
    FTC_EROOT_FAILED = -6,  /* the root failed: this process has no result */
    FTC_ETOO_MANY_FAILURES = -7, /* more than f failures: no result is safe */
    FTC_EPEER_FAILED = -8,  /* a non-tolerant (tree) collective saw a failure */
    FTC_EEXCLUDED = -9,     /* the group declared this process failed */
    FTC_ECANCELED = -10,    /* ftc_cancel, or its group or context was
                               destroyed with it in flight */
    FTC_ETRANSPORT = -11,   /* the transport refused a request */
    /* Reasons the decoder drops an incoming message (counted, never
     * delivered); ftc_transport_recv() returns them to the backend. */
    FTC_ETRUNCATED = -12,   /* shorter than its header or its length field */
    FTC_ECHECKSUM = -13,    /* CRC32C mismatch: corrupted in transit */
    FTC_EVERSION = -14,     /* bad magic or unknown wire version */
    FTC_EFOREIGN = -15,     /* another job's token */
    FTC_ESTALE = -16,       /* for an operation this process already ended */
    FTC_EBADMSG = -17,      /* well-formed header, impossible contents */
    FTC_EBUSY = -18,        /* operations of the group still in flight */
    FTC_EPEER_INVALID = -19,/* a peer could not start this operation: its
                               own call was refused (bad arguments there) */
    FTC_ETIMEDOUT = -20,    /* the operation's timeout_ns passed at some
                               member before it delivered */
    FTC_EAUTH = -21,        /* message failed authentication (no or wrong
                               MAC: forged, altered, or another key) */
    /* The failure-mitigation classes (MPI chapter 17; ftcoll/mitigation.h). */
    FTC_EPROC_FAILED = -22, /* an operation involving a failed process could
                               not complete (MPI_ERR_PROC_FAILED) */
    FTC_EINVALIDATED = -23  /* the group was invalidated (MPI_ERR_REVOKED /
                               MPI_ERR_INVALIDATED) */
} ftc_error_t;

#define FTC_ERROR_COUNT 24

/* A static, human-readable description; never NULL, even for unknown codes. */
const char *ftc_strerror(int err);

/* The symbolic name, e.g. "FTC_EINVAL"; never NULL. */
const char *ftc_err_name(int err);

#ifdef __cplusplus
}
#endif
#endif
