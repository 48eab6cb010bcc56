// Rules for what our docs promise every client. Loaded by redocly.yaml.
const THROTTLED = ['429', '503'];

function isSecured(operation, root) {
  const security = operation.security ?? root.security ?? [];
  return security.some((req) => Object.keys(req).length > 0);
}

function headerNames(response) {
  return Object.keys(response?.headers ?? {}).map((h) => h.toLowerCase());
}

function retryAfterOn429And503() {
  return {
    Operation(operation, ctx) {
      for (const status of THROTTLED) {
        const ref = operation.responses?.[status];
        if (!ref) continue;
        const response = ctx.resolve(ref).node;
        const names = headerNames(response);
        for (const required of ['retry-after', 'retry-after-ms']) {
          if (!names.includes(required)) {
            ctx.report({
              message: `A ${status} response must document the ${required} header.`,
              location: ctx.location.child(['responses', status]),
            });
          }
        }
      }
    },
  };
}

function securedOperations401And429() {
  let root;
  return {
    Root: {
      enter(node) {
        root = node;
      },
    },
    Operation(operation, ctx) {
      if (!isSecured(operation, root)) return;
      for (const status of ['401', '429']) {
        if (!operation.responses?.[status]) {
          ctx.report({
            message: `A secured operation must document ${status}.`,
            location: ctx.location.child(['responses']),
          });
        }
      }
    },
  };
}

function errorsUseTheEnvelope() {
  return {
    Operation(operation, ctx) {
      for (const [status, ref] of Object.entries(operation.responses ?? {})) {
        if (!/^[45]/.test(status)) continue;
        const response = ctx.resolve(ref).node;
        const schema = response?.content?.['application/json']?.schema;
        const target = schema?.$ref ?? '';
        if (!target.endsWith('ErrorResponse.yaml') && !target.endsWith('/ErrorResponse')) {
          ctx.report({
            message: `The ${status} response must use the shared ErrorResponse envelope.`,
            location: ctx.location.child(['responses', status]),
          });
        }
      }
    },
  };
}

function requestIdOnEveryResponse() {
  return {
    Operation(operation, ctx) {
      for (const [status, ref] of Object.entries(operation.responses ?? {})) {
        const response = ctx.resolve(ref).node;
        if (!headerNames(response).includes('x-request-id')) {
          ctx.report({
            message: `The ${status} response must document x-request-id.`,
            location: ctx.location.child(['responses', status]),
          });
        }
      }
    },
  };
}

function scopeInDescription() {
  let root;
  return {
    Root: {
      enter(node) {
        root = node;
      },
    },
    Operation(operation, ctx) {
      const security = operation.security ?? root.security ?? [];
      const scopes = security.flatMap((req) => Object.values(req).flat());
      for (const scope of scopes) {
        if (!(operation.description ?? '').includes(`\`${scope}\``)) {
          ctx.report({
            message: `The description must name the scope \`${scope}\` that the security requirement asks for.`,
            location: ctx.location.child(['description']),
          });
        }
      }
    },
  };
}

// curl, browsers and most people send `near=52.52,13.405` with the comma as typed. Without
// `allowReserved`, the OpenAPI validator refuses such a value with a 400 ("must be url encoded"),
// so the spec's own examples would fail when pasted; schemathesis and the SDK always encode and
// never see it. Every query parameter therefore accepts reserved characters as sent.
function queryAllowsReserved() {
  return {
    Parameter(parameter, ctx) {
      if (parameter.in !== 'query' || parameter.allowReserved === true) return;
      ctx.report({
        message: `Query parameter '${parameter.name}' must set allowReserved: true (clients send commas and colons unencoded).`,
        location: ctx.location,
      });
    },
  };
}

export default function promisesPlugin() {
  return {
    id: 'promises',
    rules: {
      oas3: {
        'retry-after-on-429-and-503': retryAfterOn429And503,
        'secured-operations-401-and-429': securedOperations401And429,
        'errors-use-the-envelope': errorsUseTheEnvelope,
        'request-id-on-every-response': requestIdOnEveryResponse,
        'scope-in-description': scopeInDescription,
        'query-allows-reserved': queryAllowsReserved,
      },
    },
  };
}
