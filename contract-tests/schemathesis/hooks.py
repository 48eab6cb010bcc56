# schemathesis hooks, loaded through `hooks =` in model.toml and directory.toml.
#
# The run authenticates with one admin key, and that key is listed by GET /v1/keys like any
# other: the stateful phase would, sooner or later, revoke or rotate it, and every later request
# would be a hollow 401. Calls that would revoke or rotate it act on a decoy key instead, created
# by run.ts for the purpose (a real key, so the answers stay the ones a real key gets).
# run.ts passes both ids: ST_PROTECTED_KEY_ID and ST_DECOY_KEY_ID.
import os

import schemathesis

PROTECTED = os.environ.get("ST_PROTECTED_KEY_ID")
DECOY = os.environ.get("ST_DECOY_KEY_ID")


# The stateful phase infers links from response fields named after a resource (a workflow's
# `webhook_endpoint_id`, a suppression's `campaign_id`). When such a field is null, schemathesis
# 4.32 may still follow the link and send the JSON null as the text "None" in the path
# (`GET /v1/webhook-endpoints/None`), which the spec's id pattern rightly refuses with a 400, and
# reports it as valid data rejected. A null reference names no resource: such a case is filtered
# out while it is drawn (`filter_case` runs inside Hypothesis's generation, with the link's values
# applied), so it is never sent. Rejecting it later, in `before_call`, does not work: schemathesis
# wraps anything a `before_call` hook raises, Hypothesis's reject() included, as a "Hook Error".
@schemathesis.hook
def filter_case(context, case):
    return not (case.path_parameters and any(value is None for value in case.path_parameters.values()))


# Calls that would revoke or rotate the run's own key act on the decoy instead.
@schemathesis.hook
def before_call(context, case, **kwargs):
    if PROTECTED and DECOY and case.method.upper() in ("DELETE", "POST") and case.path_parameters:
        if case.path_parameters.get("id") == PROTECTED:
            case.path_parameters["id"] = DECOY
