// Writes events/ (JSON Schemas and sample events) from the event catalogue: `npm run events:gen`.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allSchedules } from '../shared/capabilities.js';
import { eventFiles } from '../shared/platform/event-files.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'events');
for (const [name, content] of Object.entries(eventFiles(allSchedules()))) {
  const path = join(root, name);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(content, null, 2)}\n`);
  console.log(`wrote events/${name}`);
}
