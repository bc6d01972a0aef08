// SPDX-License-Identifier: GPL-2.0
/*
 * Blocks kept for reuse (see recycle.h): the per-thread bins.
 */
#include "recycle.h"

__thread struct td_recycle_bins td_recycle_bins;
