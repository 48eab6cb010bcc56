// What the directory API's pages share: the project they act in, and the picker choosing it.
import type { Client as DirectoryClient } from '../../../generated/directory/client/client/index.ts';
import type { Project } from '../../../generated/model/client/types.gen.ts';
import { allProjects, directory } from './api.ts';
import { BASE, h, picker, show } from './dom.ts';

/** What a page of the directory API's acts with: its client, the project and the header naming it. */
interface DirectoryPage {
  dir: DirectoryClient;
  projects: Project[];
  /** `?project_id=`, else the default project. */
  projectId: string;
  headers: { 'Eurus-Project': string };
}

/** Opens a page of the directory API's; undefined, the page saying so, where it is not served. */
export async function directoryPage(title: string): Promise<DirectoryPage | undefined> {
  const projects = await allProjects();
  const asked = new URLSearchParams(location.search).get('project_id');
  const projectId = projects.find((p) => p.id === asked)?.id ?? projects.find((p) => p.is_default)?.id ?? '';
  const dir = directory();
  if (!dir) {
    show(title, h('p', { class: 'error' }, 'The directory API is not served with this console.'));
    return undefined;
  }
  return { dir, projects, projectId, headers: { 'Eurus-Project': projectId } };
}

/** The form choosing the project a directory page acts in. */
export function projectPicker(page: DirectoryPage, button: string, path: string): HTMLFormElement {
  const project = h(
    'select',
    { name: 'project_id' },
    ...page.projects.map((p) => h('option', { value: p.id, selected: p.id === page.projectId }, p.name)),
  );
  return picker(
    'Choose the project',
    'Project',
    project,
    button,
    () => `${BASE}/${path}?project_id=${encodeURIComponent(project.value)}`,
  );
}
