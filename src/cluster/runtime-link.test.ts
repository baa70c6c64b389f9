import { describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import { linkRuntime, RUNTIME_ENTRY_POINTS } from './runtime-link.js';

describe('linkRuntime', () => {
  const core = JSON.stringify(pathToFileURL(RUNTIME_ENTRY_POINTS.sluice!).href);
  const connectors = JSON.stringify(pathToFileURL(RUNTIME_ENTRY_POINTS['sluice/connectors']!).href);

  it("links esbuild's imports of the entry points to this installation's files, and nothing else", () => {
    const bundle = [
      'import { defineJob, valueState } from "sluice";',
      'import {numberSource} from"sluice/connectors";',
      'import "sluice";',
      'const later = await import( "sluice/connectors");',
      'const text = "sluice"; const other = "sluice/testing"; console.log(text + " from \\"sluice\\"");',
      'import { x } from "sluice-extra";',
    ].join('\n');
    expect(linkRuntime(bundle).split('\n')).toEqual([
      `import { defineJob, valueState } from ${core};`,
      `import {numberSource} from${connectors};`,
      `import ${core};`,
      `const later = await import( ${connectors});`,
      'const text = "sluice"; const other = "sluice/testing"; console.log(text + " from \\"sluice\\"");',
      'import { x } from "sluice-extra";',
    ]);
  });
});
