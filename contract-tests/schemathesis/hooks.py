# schemathesis hooks, loaded through `hooks =` in model.toml and directory.toml.
#
# The run authenticates with one admin key, and that key is listed by GET /v1/keys like any
# other: the stateful phase would, sooner or later, revoke or rotate it, and every later request
# would be a hollow 401. Calls that would revoke or rotate it act on a decoy key instead, created
# by run.ts for the purpose (a real key, so the answers stay the ones a real key gets).
# run.ts passes both ids: ST_PROTECTED_KEY_ID and ST_DECOY_KEY_ID.
import os

import schemathesis
from hypothesis import reject

PROTECTED = os.environ.get("ST_PROTECTED_KEY_ID")
DECOY = os.environ.get("ST_DECOY_KEY_ID")


# The stateful phase infers links from response fields named after a resource (a workflow's
# `webhook_endpoint_id`, a suppression's `campaign_id`). When such a field is null, schemathesis
# 4.32 still follows the link and sends the JSON null as the text "None" in the path
# (`GET /v1/webhook-endpoints/None`), which the spec's id pattern rightly refuses with a 400, and
# reports it as valid data rejected. A null reference names no resource: such a step is discarded
# (Hypothesis's reject, as schemathesis does itself for steps it cannot use), not sent.
@schemathesis.hook
def before_call(context, case, **kwargs):
    if case.path_parameters and any(value is None for value in case.path_parameters.values()):
        reject()
    if PROTECTED and DECOY and case.method.upper() in ("DELETE", "POST") and case.path_parameters:
        if case.path_parameters.get("id") == PROTECTED:
            case.path_parameters["id"] = DECOY
