"""The event type indices the recorder writes first in each event (``adtrace.eventlog``)."""

from ..events import EVENT_TYPES, AddOutgrads, BackwardEnd, BackwardStart, JVPNodeCreated, JVPRoot, LocalVJP, NodeCreated, RootCreated, ToposortYield, TraceReturned

# Each event is written led by its type's index in EVENT_TYPES.
(ROOTCREATED, NODECREATED, TRACERETURNED, BACKWARDSTART, TOPOSORTYIELD, LOCALVJP, ADDOUTGRADS,
 BACKWARDEND, JVPROOT, JVPNODECREATED) = (EVENT_TYPES.index(c) for c in (
    RootCreated, NodeCreated, TraceReturned, BackwardStart, ToposortYield, LocalVJP, AddOutgrads,
    BackwardEnd, JVPRoot, JVPNodeCreated))
