// The floors of src/ (ARCHITECTURE.md), read by both import checks of `npm run lint`: ESLint
// (eslint.config.js: which folder may import which) and dependency-cruiser
// (.dependency-cruiser.js: no import to the same or a higher floor, no cycle).

/** From the ground up. A folder imports only folders on lower floors; the top floor is the root. */
export const FLOORS = [
  ['platform'],
  ['accounts', 'limits', 'usage', 'mail', 'embeddings', 'status', 'webhooks', 'media'],
  // what the service knows of people's languages, read by search and the concierge alike
  ['understanding'],
  ['model', 'console', 'directory'],
  ['agents', 'sales'],
  ['mcp', 'concierge', 'crm'],
  ['privacy'],
  // the services' assemblies and the composition root; the root's own files are src/*.ts
  ['services'],
];

const SHARED = ['accounts', 'limits', 'usage', 'mail', 'embeddings', 'status'];

/** What each folder may import besides itself, generated/ and npm packages. */
export const MAY_IMPORT = {
  platform: [],
  accounts: ['platform'],
  limits: ['platform'],
  usage: ['platform'],
  mail: ['platform'],
  embeddings: ['platform'],
  status: ['platform'],
  webhooks: ['platform'],
  media: ['platform'],
  understanding: ['platform', 'embeddings'],
  model: ['platform', ...SHARED, 'media'],
  console: ['platform', 'accounts', 'limits', 'mail'],
  directory: ['platform', ...SHARED, 'understanding'],
  agents: ['platform', 'limits', 'usage', 'model'],
  sales: ['platform', ...SHARED, 'webhooks', 'console', 'directory'],
  mcp: ['platform', 'agents'],
  concierge: ['platform', ...SHARED, 'understanding', 'webhooks', 'console', 'directory', 'sales'],
  crm: ['platform', ...SHARED, 'webhooks', 'sales'],
  // composes every feature's account-data part (export, erasure, retention)
  privacy: [
    'platform',
    ...SHARED,
    'webhooks',
    'media',
    'console',
    'mcp',
    'agents',
    'sales',
    'concierge',
    'crm',
  ],
  services: 'everything',
};

/** A feature's files that only the services (and privacy, the account-data parts) import. */
export const ASSEMBLY_FACES = ['routes\\.ts', '[a-z-]+-routes\\.ts', 'pages\\.ts', 'account-data\\.ts'];
