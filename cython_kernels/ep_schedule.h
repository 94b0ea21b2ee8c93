// ep_schedule.h -- constants the schedule (ep_schedule.c) shares with the
// drivers that carry its decisions out.
#ifndef EP_SCHEDULE_H
#define EP_SCHEDULE_H

// k == 0 (C = beta * C) walks C in blocks of this many rows and columns.
#define EP_SCALE_BLOCK 256

// Threads of the smm path over m take row ranges in multiples of this (the
// smm tiles are 8 or 6 rows): every row is still summed in the same order,
// so the result is the same to the last bit for any thread count.
#define EP_SMM_ROW_QUANTUM 24

// The measured choice of how B is taken (EP_B_MEASURED): the way this call
// takes (*m set when the call is to be timed, NULL once chosen), and its
// timed sample.
#include <stdint.h>
#include "ep_api.h"
#include "ep_measured.h"
int ep_b_way_turn(const ep_schedule_t *s, int dtype, ep_measured_t **m);
void ep_b_way_sample(ep_measured_t *m, int way, const ep_schedule_t *s, int64_t ns);

#endif
