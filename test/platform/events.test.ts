import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allSchedules } from '../../shared/capabilities.js';
import { eventFiles } from '../../shared/platform/event-files.js';
import { type DetailType, detailSchemas, eventSchema, eventsSchema } from '../../shared/platform/events.js';
import { InputValidationError, parseOrThrow } from '../../shared/platform/validation.js';

const root = join(import.meta.dirname, '..', '..', 'events');

describe('events/', () => {
  it('holds the schemas and samples generated from the catalogue (run `npm run events:gen` when this fails)', async () => {
    for (const [name, content] of Object.entries(eventFiles(allSchedules()))) {
      const onDisk = JSON.parse(await readFile(join(root, name), 'utf8'));
      expect(onDisk, `events/${name} is stale`).toEqual(content);
    }
  });

  it('has a sample per detail-type that its schema accepts', async () => {
    for (const detailType of Object.keys(detailSchemas) as DetailType[]) {
      const sample = JSON.parse(await readFile(join(root, 'samples', `${detailType}.json`), 'utf8'));
      expect(() => parseOrThrow(eventSchema(detailType), sample, detailType)).not.toThrow();
    }
  });
});

describe('event validation', () => {
  it('names the bad field of a malformed event', async () => {
    const sample = JSON.parse(await readFile(join(root, 'samples', 'ClusterWorkRequested.json'), 'utf8'));
    sample.detail.cluster = 42;
    delete sample.detail.cycleId;
    const schema = eventsSchema(['ClusterWorkRequested', 'ClusterRegistered']);
    try {
      parseOrThrow(schema, sample, 'ClusterWorkRequested event');
      expect.unreachable('a malformed event must be refused');
    } catch (err) {
      expect(err).toBeInstanceOf(InputValidationError);
      const message = (err as Error).message;
      expect(message).toContain('detail.cluster');
      expect(message).toContain('detail.cycleId');
    }
  });

  it('refuses unknown detail fields and unknown detail-types', () => {
    const event = {
      version: '0',
      id: 'x',
      'detail-type': 'ClusterDeregistered',
      source: 'fleetscope',
      account: '1',
      time: 't',
      region: 'r',
      resources: [],
      detail: { cluster: 'a', deregisteredAt: '2026-11-21T10:00:00Z', extra: true },
    };
    expect(() => parseOrThrow(eventSchema('ClusterDeregistered'), event, 'e')).toThrow(/extra/);
    expect(() =>
      parseOrThrow(eventsSchema(['ClusterRegistered']), { ...event, 'detail-type': 'Nope' }, 'e'),
    ).toThrow(/detail-type/);
  });
});
