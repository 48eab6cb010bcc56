# schemathesis hooks, loaded through `hooks =` in model.toml.
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


@schemathesis.hook
def before_call(context, case, **kwargs):
    if PROTECTED and DECOY and case.method.upper() in ("DELETE", "POST") and case.path_parameters:
        if case.path_parameters.get("id") == PROTECTED:
            case.path_parameters["id"] = DECOY
