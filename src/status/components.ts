// The components of the status page: the interfaces of the two services as the product documents
// name them, with their SLAs (the directory's: 99.9 % Search and Places, 99.5 % Sales and
// Concierge; the model document names none, so its interfaces keep the 99.9 % promised before).
// What each probe does is said here; services/probes.ts does it.
import type { ComponentId, ComponentInfo } from './status.ts';

export const STATUS_COMPONENTS: ReadonlyArray<ComponentInfo & { id: ComponentId }> = [
  {
    id: 'chat',
    name: 'Chat completions',
    service: 'model',
    sla: 99.9,
    does: "A chat completion of one short message by the engine of `prince` (on an operator's upstream, a connection only: no tokens spent), and the Model API's /readyz over HTTP through the outbound guard.",
  },
  {
    id: 'media',
    name: 'Images and speech',
    service: 'model',
    sla: 99.9,
    does: "A 256×256 image at low quality painted by the engine of `imagine` (on an operator's upstream, a connection only), and the Model API's /readyz over HTTP through the outbound guard.",
  },
  {
    id: 'agents',
    name: 'Agents runtime',
    service: 'model',
    sla: 99.9,
    does: "A job sent through the queue and run by a worker, as background responses run, one engine step of `queen` (on an operator's upstream, a connection only), and the Model API's /readyz over HTTP through the outbound guard.",
  },
  {
    id: 'search',
    name: 'Search',
    service: 'directory',
    sla: 99.9,
    does: "A search for one listing through the directory's own search, and the Directory API's /readyz over HTTP through the outbound guard.",
  },
  {
    id: 'places',
    name: 'Places',
    service: 'directory',
    sla: 99.9,
    does: "A geocode of `Berlin` and a listing's place details through the directory's own places code, and the Directory API's /readyz over HTTP through the outbound guard.",
  },
  {
    id: 'sales',
    name: 'Sales',
    service: 'directory',
    sla: 99.5,
    does: "A job sent through the queue and run by a worker, and the mail relay's greeting (SMTP connect and EHLO to SMTP_URL through the outbound guard; without a relay, the outbox folder writable).",
  },
  {
    id: 'concierge',
    name: 'Concierge',
    service: 'directory',
    sla: 99.5,
    does: 'A job sent through the queue and run by a worker, and the Model API the concierge calls answering /readyz over HTTP through the outbound guard.',
  },
];
