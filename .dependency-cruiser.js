// No import runs up the floors of src/ (layers.js) and none closes a cycle; a feature does not
// import another's routes, pages or account-data part. `npm run lint` runs it.
import { ASSEMBLY_FACES, FLOORS } from './layers.js';

const any = (folders) => `^src/(${folders.join('|')})/`;
const ROOT = '^src/[^/]+\\.ts$';

const upward = FLOORS.slice(0, -1).flatMap((floor, i) => {
  const above = FLOORS.slice(i + 1).flat();
  return floor.map((folder) => ({
    name: `no-upward-from-${folder}`,
    comment: `src/${folder} is on floor ${i + 1}: it imports nothing on its own floor or above (layers.js)`,
    severity: 'error',
    from: { path: `^src/${folder}/` },
    to: { path: [any([...above, ...floor.filter((f) => f !== folder)]), ROOT] },
  }));
});

export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules that import each other in a loop, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'no-other-feature-faces',
      comment:
        "Another folder's routes, pages and account-data part are the services' and privacy's to mount",
      severity: 'error',
      from: { path: '^src/([a-z-]+)/', pathNot: '^src/(services|privacy)/' },
      to: { path: `^src/[a-z-]+/(${ASSEMBLY_FACES.join('|')})$`, pathNot: ['^src/$1/', '^src/platform/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^generated/', '\\.test\\.ts$', '/testing/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
