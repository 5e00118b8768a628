// Int8 values on the wire. In a plan of a QDQ model (graph/insert_qdq.h) a
// task often sends the output of a DequantizeLinear whose input its own
// QuantizeLinear made: floats that are int8 integers times one scale.
// SendInt8 turns such a transfer around to carry the integers, a byte each,
// and moves the DequantizeLinear to the receiver, which dequantizes them
// itself; the receiver's engine reads the integers straight into its int8
// layers. Exact: the same node computes the same floats on either side.
#ifndef SHOAL_PLAN_INT8_TRANSFERS_H_
#define SHOAL_PLAN_INT8_TRANSFERS_H_

#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

// Moves each per-tensor DequantizeLinear whose output a task sends, and
// whose input holds int8 integers, to the tasks that receive it (when every
// transfer into that input can move alike), drops the ones no one reads
// any more, and marks int8 every copied transfer whose source holds int8
// integers (Transfer::int8). Returns how many transfers it marked.
StatusOr<int> SendInt8(Plan* p);

// Every transfer marked int8 copies from a tensor that holds int8
// integers: the output of a QuantizeLinear of its task's fragment, or an
// input of that task that only int8 transfers fill. Errors name the
// transfer.
Status CheckInt8Transfers(const Plan& p);

}  // namespace shoal

#endif  // SHOAL_PLAN_INT8_TRANSFERS_H_
