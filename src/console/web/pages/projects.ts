// The projects page.
import { createProject } from '../../../../generated/model/client/sdk.gen.ts';
import { allProjects } from '../api.ts';
import { field, h, messageOf, rowForm, say, show, status, table, when } from '../dom.ts';

export async function projectsPage(): Promise<void> {
  const projects = await allProjects();
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '100' });
  const out = status();
  const form = rowForm(
    'Create a project',
    [field('New project name', name)],
    'Create project',
    out,
    async () => {
      const { data, error } = await createProject({ body: { name: name.value } });
      if (!data) return say(out, messageOf(error), 'error');
      await projectsPage();
    },
  );
  show(
    'Projects',
    h('p', {}, 'Projects group API keys and their usage.'),
    form,
    table(
      {},
      `${projects.length} project(s)`,
      ['Name', 'Id', 'Created'],
      projects.map((p) =>
        h(
          'tr',
          {},
          h('td', {}, p.name, p.is_default ? ' (default)' : ''),
          h('td', {}, h('code', {}, p.id)),
          h('td', {}, when(p.created)),
        ),
      ),
    ),
  );
}
