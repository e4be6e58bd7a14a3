/* SPDX-License-Identifier: BSD-3-Clause */
/* ftcoll: fault-tolerant collective operations. The one header to include. */
#ifndef FTCOLL_FTCOLL_H
#define FTCOLL_FTCOLL_H

#include "ftcoll/version.h"
#include "ftcoll/error.h"
#include "ftcoll/datatype.h"
#include "ftcoll/topology.h"
#include "ftcoll/transport.h"
#include "ftcoll/context.h"
#include "ftcoll/collective.h"
#include "ftcoll/algo.h"
#include "ftcoll/corrected.h"
#include "ftcoll/tree.h"


#endif
