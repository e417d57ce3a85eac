"""Agent traces as decisions: which OpenTelemetry spans carry a decision, and the plans and decisions a trace becomes.

Spans come from any OpenTelemetry-instrumented runtime, in OpenInference's conventions
(``openinference.span.kind``: AGENT, TOOL, RETRIEVER, DECISION, ...) or in OpenTelemetry's GenAI
conventions (``gen_ai.operation.name``: ``invoke_agent``, ``invoke_workflow``, ``plan``,
``execute_tool``, ``retrieval``, ...). The mapping (docs/interop.md has it as a table):

- an **agent** span (AGENT, ``invoke_agent``) or a **workflow** span (``invoke_workflow``) is a
  plan: its input the plan's prompt, and one ``strategy_choice`` (which agent or workflow takes
  the task on) that the plan's other decisions hang under; the trace's root span is a plan too
  when decisions lie outside every agent span;
- an agent or workflow span inside another's is a **child plan**, spawned by a ``subplan_spawn``
  of the outer plan (``subplan_parallel_spawn`` when it ran alongside a sibling);
- a **plan** span (``plan``: an agent planning, or decomposing its task) is a ``strategy_choice``
  of its agent's plan, and what its agent does after it hangs under it;
- a **tool** span (TOOL, ``execute_tool``) is a ``tool_invocation``, a **retrieval** span
  (RETRIEVER, ``retrieval``) a ``resource_selection`` (the documents it returned are its
  resources), a **DECISION** span a decision of the type it names
  (``decisiontrail.decision.type``, else ``implementation_choice``); any span may name its
  decision outright with ``decisiontrail.decision.*`` attributes;
- every other span (model calls, chains, embeddings, memory operations, ...) carries no decision
  and is kept out.

``spans`` says what a span carries, ``conventions`` holds the conventions' vocabulary,
``content`` what a span's decision says, and ``steps`` turns the spans of one trace into the
steps a service writes in one transaction.
"""

from __future__ import annotations

from decisiontrail.domain.traces.conventions import Operation
from decisiontrail.domain.traces.spans import AttributeValue, Span, decision_kind, is_trace_root, kept_out_reason
from decisiontrail.domain.traces.steps import ChangePhase, CreatePlan, PlaceDecisions, Step, import_steps, recorded_id

__all__ = [
    "AttributeValue",
    "ChangePhase",
    "CreatePlan",
    "Operation",
    "PlaceDecisions",
    "Span",
    "Step",
    "decision_kind",
    "import_steps",
    "is_trace_root",
    "kept_out_reason",
    "recorded_id",
]
