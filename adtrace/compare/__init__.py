"""Stage 3, compare: one user call traced by autograd and by the reference engine, side by side.

``traced_call.trace_call`` runs both; ``align`` holds autograd's running ``outgrads`` against the
lecture's ``node_to_grad`` node by node; ``checks`` are the pass/fail verdicts a report states
(the engines agree, both visit orders are valid, central finite differences).
"""
